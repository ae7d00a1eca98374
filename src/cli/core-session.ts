import { AgentCore } from '../core';
import { silentLogger } from '../log';
import type { CommandContext } from './command';

/**
 * Opens the data folder for one command (reading, or writing when no agent runs: see
 * control-client.ts), runs `fn` and closes it again, whatever happens. With --json nothing but the
 * JSON goes to the console.
 */
export function withCore<T>(ctx: CommandContext, fn: (core: AgentCore) => T): T {
  const config = ctx.config();
  const core = new AgentCore(config, ctx.json ? silentLogger : ctx.logger(config, { console: false }));
  try {
    return fn(core);
  } finally {
    core.close();
  }
}
