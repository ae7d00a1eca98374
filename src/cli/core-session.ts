import { AgentCore } from '../core';
import { silentLogger } from '../log';
import type { CommandContext } from './command';

/**
 * Opens the data folder for one command (reading, or writing when no agent runs: see
 * control-client.ts), runs `fn` and closes it again, whatever happens. With --json nothing but the
 * JSON goes to the console. A folder an older version left is refused, not upgraded: only the
 * agent's start (and restore) upgrades it (commandCore).
 */
export function withCore<T>(ctx: CommandContext, fn: (core: AgentCore) => T): T {
  const core = commandCore(ctx);
  try {
    return fn(core);
  } finally {
    core.close();
  }
}

/**
 * The core for one command, the caller closing it: refuses a data folder an older version left
 * (`site_not_upgraded`) before opening anything, so a command never commits the site to this version.
 */
export function commandCore(ctx: CommandContext): AgentCore {
  const config = ctx.config();
  return new AgentCore(config, ctx.json ? silentLogger : ctx.logger(config, { console: false }), { olderData: 'refuse' });
}
