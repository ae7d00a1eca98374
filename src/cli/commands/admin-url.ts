import { AppError } from '../../errors';
import { EXIT, type Command } from '../command';
import { rotateToken, tokenFilePath } from '../../admin/token';
import { timeWithZone } from '../../domain/local-time';
import { cliCommand } from '../../config/invocation';
import type { Config } from '../../config/schema';
import { operatorName } from '../../core';
import { controlEndpoint, LoginLinkReply } from '../../ops/control-protocol';
import { ControlClient } from '../../ops/control-request';
import { auditOnDataFolder } from '../../store/audit';

/**
 * Prints a login link for the status window (a manager who lost the tab, or whose session ended).
 * The link carries a one-time code, not the token: it works once, for admin.loginLinkMinutes.
 * `--rotate` first replaces the token: every open session and unused link stops working.
 *
 * The link comes from the agent running on the data folder, over its control channel
 * (ops/control-access.ts): the token file is not read here, so an administrator gets a link from a
 * service agent whose files are its own, and the link is for the port the agent really listens on.
 * Its code is signed with a key of that start of the window's server (admin/security.ts), so with no
 * agent running there is no link to give: one made here would be for whoever listens on the port
 * meanwhile, another account's program included. `--rotate` without an agent replaces the token only.
 */

type Link = { url: string; expiresAt: string; rotated: boolean };

/** Nothing listens on the channel: no agent runs on the folder. */
function nobodyAnswers(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ECONNREFUSED';
}

async function fromAgent(config: Readonly<Config>, rotate: boolean): Promise<Link | null> {
  const endpoint = controlEndpoint(config.dataDir);
  try {
    const reply = await new ControlClient(endpoint, operatorName(), 30_000).request(LoginLinkReply, { method: 'POST', route: '/login-link', body: { via: 'command line', rotate } });
    return reply;
  } catch (err) {
    if (nobodyAnswers(err)) return null;
    if (err instanceof AppError && err.id === 'not_found') {
      throw new AppError(
        'agent_too_old',
        409,
        `the agent running on ${config.dataDir} is an older version that gives no login links to this command: restart it (it then runs this version), or use the address it printed when it started`,
      );
    }
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

/** No agent answers: `--rotate` replaces the token file here; no link is made (see above). */
function withoutAgent(config: Readonly<Config>, rotate: boolean): void {
  const start = `${cliCommand('serve')}, or start the service`;
  if (!rotate) {
    throw new AppError(
      'agent_not_running',
      404,
      `no agent is running on ${config.dataDir}, so there is no status window to log in to: start it (${start}), then run ${cliCommand('admin-url')} again`,
    );
  }
  rotateToken(tokenFilePath(config.dataDir, config.admin.tokenFile));
  auditOnDataFolder(config.dataDir, `${operatorName()} (command line)`, 'login-link', { rotated: true, linkMade: false });
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
    const rotatedText = 'New access token written: every open status window must log in again; scripts need the new token (admin-token file).';
    const link = await fromAgent(config, rotate);
    if (!link) {
      withoutAgent(config, rotate);
      if (ctx.json) ctx.printJson({ url: null, expiresAt: null, rotated: true });
      else ctx.out(`${rotatedText}\nNo agent is running on ${config.dataDir}: start it (${cliCommand('serve')}, or start the service), then run ${cliCommand('admin-url')} for a login link.`);
      return EXIT.ok;
    }
    if (ctx.json) ctx.printJson({ url: link.url, expiresAt: link.expiresAt, rotated: link.rotated });
    else {
      if (link.rotated) ctx.out(rotatedText);
      ctx.out(link.url);
      ctx.out(`(works once, until ${timeWithZone(link.expiresAt)}; keep it private)`);
    }
    return EXIT.ok;
  },
};
