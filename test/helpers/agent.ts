import { after } from 'node:test';
import { Agent, type AgentService } from '../../src/agent';
import type { Config } from '../../src/config/schema';
import { silentLogger, type Logger } from '../../src/log';
import { testConfig } from './fixtures';

export interface RunningTestAgent {
  readonly agent: Agent;
  readonly config: Readonly<Config>;
  /** Full URL of the webhook endpoint. */
  readonly webhookUrl: string;
  /** Base URL of the webhook listener (for /healthz and wrong paths). */
  readonly baseUrl: string;
  post(body: unknown, headers?: Record<string, string>): Promise<{ status: number; json: unknown; headers: Headers }>;
  /** Waits until the applier has nothing left it can apply now. */
  settle(): Promise<void>;
}

/** Starts a real agent on loopback (port 0) with a temp data dir; stopped when the test file ends. */
export async function startTestAgent(
  overrides: Record<string, unknown> = {},
  options: { log?: Logger; services?: AgentService[]; applierRestAfterMs?: number } = {},
): Promise<RunningTestAgent> {
  const config = testConfig(overrides);
  const agent = new Agent(config, options.log ?? silentLogger, options.services ?? [], options.applierRestAfterMs);
  await agent.start();
  after(() => agent.stop());
  const webhookUrl = agent.webhook!.url;
  const baseUrl = webhookUrl.slice(0, webhookUrl.length - config.webhook.path.length);
  return {
    agent,
    config,
    webhookUrl,
    baseUrl,
    async post(body, headers = {}) {
      const res = await fetch(webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        json = text;
      }
      return { status: res.status, json, headers: res.headers };
    },
    async settle() {
      await new Promise((r) => setImmediate(r));
      await agent.drainNow();
    },
  };
}
