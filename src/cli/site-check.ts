import fs from 'node:fs';
import path from 'node:path';
import { cliCommand } from '../config/invocation';
import { describeSite } from '../config/site';
import { AppError } from '../errors';
import { isInstanceLocked } from '../ops/instance';
import { AGENT_FILE, TILL_FILE } from '../store/database';
import { describeLayout } from '../store/split';
import type { CommandContext, DataUse } from './command';

/** Does the folder hold a site's data (an agent has run there)? Asked without creating anything. */
export function holdsData(dataDir: string): boolean {
  return fs.existsSync(path.join(dataDir, AGENT_FILE));
}

/** Does the folder hold 0.1's single file, not split yet (the agent's next start upgrades it)? Read only. */
export function holdsUnsplitLegacyData(dataDir: string): boolean {
  if (holdsData(dataDir)) return false;
  try {
    return describeLayout(path.join(dataDir, TILL_FILE)) === 'legacy-single-file';
  } catch {
    // Not a database this version can read: not 0.1's either, and the usual refusal says where.
    return false;
  }
}

/**
 * Before a command that reads or changes the site's data: says which data folder and configuration it
 * acts on (the first line of its output; with --json, nothing more is printed). A read-only
 * command on a folder without data refuses and creates nothing. A change there is handed to an agent
 * that runs on it (it may be starting), made when the configuration was named (--config,
 * POS_SYNC_CONFIG), and refused when the configuration was only found by default. A restore there is
 * refused only when no configuration names the folder (the built-in defaults).
 */
export function checkSite(ctx: CommandContext, commandName: string, use: DataUse): void {
  if (use === 'none') return;
  const config = ctx.config();
  const where = describeSite(ctx.site());
  if (!ctx.json) ctx.out(`Data folder: ${config.dataDir} (configuration: ${where})`);
  if (holdsData(config.dataDir)) return;
  if (use === 'change' && fs.existsSync(config.dataDir) && isInstanceLocked(config.dataDir)) return;
  // Read here, 0.1's file would be taken for an empty site; changed here, it would be split by a command.
  if (use !== 'replace' && holdsUnsplitLegacyData(config.dataDir)) {
    throw new AppError(
      'site_not_upgraded',
      409,
      `${config.dataDir} holds a 0.1 agent's data in ${TILL_FILE}, not upgraded yet (configuration: ${where}): ${commandName} ${use === 'read' ? 'reads' : 'changes'} only upgraded data. ` +
        `Start the agent once to upgrade it (${cliCommand('serve')}), then run this again.`,
    );
  }
  // A restore onto a new PC fills an empty folder, of the configuration found by the rule; with no
  // configuration at all, the default folder is one no agent of the site reads.
  // A 0.1 data folder not split yet holds its data in the till's file alone: restore keeps it aside.
  if (use === 'replace' && fs.existsSync(path.join(config.dataDir, TILL_FILE))) return;
  if (use === 'replace' && ctx.site().source !== 'defaults') {
    if (!ctx.json) ctx.out(`No data in ${config.dataDir} yet: the backup is restored into it.`);
    return;
  }
  // A change on a configuration named on purpose (--config, POS_SYNC_CONFIG) may start that site's
  // data (support's manual delivery before the first start); one found by default may not: that is
  // how an import once went into a folder no agent read.
  const named = ctx.site().source === 'option' || ctx.site().source === 'environment';
  if (use === 'change' && named) {
    if (!ctx.json) ctx.out(`No data in ${config.dataDir} yet: it is created for this site.`);
    return;
  }
  const start = cliCommand('serve');
  throw new AppError(
    'no_site_data',
    404,
    use === 'read'
      ? `no agent has run on ${config.dataDir} (configuration: ${where}): nothing to show, and nothing was created. ` +
          `Give the site's configuration with --config FILE (or ${'POS_SYNC_CONFIG'}), or start the agent first: ${start}`
      : use === 'replace'
        ? `${commandName} refused: ${config.dataDir} holds no data and no configuration names it (${where}), so no agent of this site would read what is restored there. ` +
          `Give the site's configuration with --config FILE (or POS_SYNC_CONFIG)`
        : `${commandName} refused: no agent runs on ${config.dataDir} and it holds no data (configuration: ${where}), so this could start a second, empty site. ` +
          `Give the site's configuration with --config FILE (or POS_SYNC_CONFIG), or start the agent first: ${start}`,
  );
}
