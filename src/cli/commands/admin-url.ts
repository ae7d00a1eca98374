import { AppError } from '../../errors';
import { EXIT, type Command } from '../command';
import { LOGIN_PARAM, mintLoginCode } from '../../admin/security';
import { loadOrCreateToken, rotateToken, tokenFilePath } from '../../admin/token';
import { timeWithZone } from '../../domain/local-time';
import { cliCommand } from '../../config/invocation';
import { runningAgent } from '../../ops/instance';

/**
 * Prints a login link for the status window (a manager who lost the tab, or whose session ended).
 * The link carries a one-time code, not the token: it works once, for admin.loginLinkMinutes.
 * `--rotate` first replaces the token: every open session and unused link stops working.
 */
export const adminUrl: Command = {
  name: 'admin-url',
  summary: 'print a one-time login link for the status window (--rotate: new token, all sessions end)',
  usage: '[--rotate]',
  options: { rotate: { type: 'boolean' } },
  run(ctx) {
    const config = ctx.config();
    if (!config.admin.enabled) throw new AppError('admin_disabled', 400, 'the status window is disabled (admin.enabled is false)');
    if (config.admin.port === 0) throw new AppError('admin_port_dynamic', 400, 'admin.port is 0 (a free port chosen at start-up): use the address `serve` printed');
    const file = tokenFilePath(config.dataDir, config.admin.tokenFile);
    const rotated = ctx.values.rotate === true;
    const token = rotated ? rotateToken(file) : loadOrCreateToken(file);
    const host = config.admin.host === '::1' ? '[::1]' : config.admin.host;
    const login = mintLoginCode(token, new Date(), config.admin.loginLinkMinutes);
    const url = `http://${host}:${config.admin.port}/?${LOGIN_PARAM}=${login.code}`;
    if (ctx.json) ctx.printJson({ url, expiresAt: login.expiresAt.toISOString(), rotated });
    else {
      if (rotated) ctx.out('New access token written: every open status window must log in again; scripts need the new token (admin-token file).');
      ctx.out(url);
      ctx.out(`(works once, until ${timeWithZone(login.expiresAt.toISOString())}; keep it private)`);
      // A link to a port where nothing listens is no use: say so, and how to start the agent.
      if (!runningAgent(config.dataDir)) ctx.out(`No agent is running on ${config.dataDir}: the link works once it runs (${cliCommand('serve')}, or start the service).`);
    }
    return EXIT.ok;
  },
};
