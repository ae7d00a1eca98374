import { AppError } from '../../errors';
import { EXIT, type Command } from '../command';
import { LOGIN_PARAM, mintLoginCode } from '../../admin/security';
import { loadOrCreateToken, rotateToken, tokenFilePath } from '../../admin/token';
import { timeWithZone } from '../../domain/local-time';
import { cliCommand } from '../../config/invocation';
import type { Config } from '../../config/schema';
import { operatorName } from '../../core';
import { controlEndpoint, LoginLinkReply } from '../../ops/control-protocol';
import { ControlClient } from '../../ops/control-request';
import { runningAgent } from '../../ops/instance';
import { auditOnDataFolder } from '../../store/audit';

/**
 * Prints a login link for the status window (a manager who lost the tab, or whose session ended).
 * The link carries a one-time code, not the token: it works once, for admin.loginLinkMinutes.
 * `--rotate` first replaces the token: every open session and unused link stops working.
 *
 * While an agent runs on the data folder the link comes from it, over its control channel
 * (ops/control-access.ts): the token file is not read here, so an administrator gets a link from a
 * service agent whose files are its own, and the link is for the port the agent really listens on.
 * Only when no agent answers there is the link made here from the token file.
 */

type Link = { url: string; expiresAt: string; rotated: boolean; via: 'agent' | 'direct' };

/** Nothing listens on the channel (no agent, or one from before the route existed): make it here. */
function nobodyAnswers(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ECONNREFUSED' || (err instanceof AppError && err.id === 'not_found');
}

async function fromAgent(config: Readonly<Config>, rotate: boolean): Promise<Link | null> {
  const endpoint = controlEndpoint(config.dataDir);
  try {
    const reply = await new ControlClient(endpoint, operatorName(), 30_000).request(LoginLinkReply, { method: 'POST', route: '/login-link', body: { via: 'command line', rotate } });
    return { ...reply, via: 'agent' };
  } catch (err) {
    if (nobodyAnswers(err)) return null;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') {
      throw new AppError(
        'agent_not_yours',
        403,
        `the agent on ${config.dataDir} runs under another account and gives login links only to that account` +
          `${process.platform === 'win32' ? ', SYSTEM and administrators: run this in a terminal opened with "Run as administrator"' : ' and root: run it with sudo'}`,
      );
    }
    throw err;
  }
}

function direct(config: Readonly<Config>, rotate: boolean): Link {
  if (config.admin.port === 0) throw new AppError('admin_port_dynamic', 400, 'admin.port is 0 (a free port chosen at start-up) and no agent answers: use the address `serve` printed');
  const file = tokenFilePath(config.dataDir, config.admin.tokenFile);
  const token = rotate ? rotateToken(file) : loadOrCreateToken(file);
  const host = config.admin.host === '::1' ? '[::1]' : config.admin.host;
  const login = mintLoginCode(token, new Date(), config.admin.loginLinkMinutes);
  // The agent audits the links it hands out; here the command does, when the folder has a log.
  auditOnDataFolder(config.dataDir, `${operatorName()} (command line)`, 'login-link', { rotated: rotate, expiresAt: login.expiresAt.toISOString() });
  return { url: `http://${host}:${config.admin.port}/?${LOGIN_PARAM}=${login.code}`, expiresAt: login.expiresAt.toISOString(), rotated: rotate, via: 'direct' };
}

export const adminUrl: Command = {
  name: 'admin-url',
  summary: 'print a one-time login link for the status window (--rotate: new token, all sessions end)',
  usage: '[--rotate]',
  options: { rotate: { type: 'boolean' } },
  async run(ctx) {
    const config = ctx.config();
    if (!config.admin.enabled) throw new AppError('admin_disabled', 400, 'the status window is disabled (admin.enabled is false)');
    const rotate = ctx.values.rotate === true;
    const link = (await fromAgent(config, rotate)) ?? direct(config, rotate);
    if (ctx.json) ctx.printJson({ url: link.url, expiresAt: link.expiresAt, rotated: link.rotated });
    else {
      if (link.rotated) ctx.out('New access token written: every open status window must log in again; scripts need the new token (admin-token file).');
      ctx.out(link.url);
      ctx.out(`(works once, until ${timeWithZone(link.expiresAt)}; keep it private)`);
      // A link to a port where nothing listens is no use: say so, and how to start the agent.
      if (link.via === 'direct' && !runningAgent(config.dataDir)) ctx.out(`No agent is running on ${config.dataDir}: the link works once it runs (${cliCommand('serve')}, or start the service).`);
    }
    return EXIT.ok;
  },
};
