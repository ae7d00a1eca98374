import { adminUrl } from './admin-url';
import { audit } from './audit';
import { CONFLICT_COMMANDS } from './conflicts';
import type { Command, DataUse } from '../command';
import { changes } from './changes';
import { devPublisher } from './dev-publisher';
import { OPS_COMMANDS } from './ops';
import { STAFF_COMMANDS } from './staff';
import { ackWarnings, configShow, deliveries, forceApply, importCommand, lookup, pause, resume, serve, status } from './sync';

/** Every CLI command. Add a module's commands here. */
export const COMMANDS: readonly Command[] = [serve, importCommand, status, lookup, changes, forceApply, ...CONFLICT_COMMANDS, ackWarnings, pause, resume, deliveries, audit, configShow, ...STAFF_COMMANDS, ...OPS_COMMANDS, adminUrl, devPublisher];

/**
 * What each command does with the site's data folder (cli/site-check.ts): read-only commands never
 * create it; changes refuse an empty folder with no agent. A command not listed acts on no site data
 * (serve creates its folder; config, secrets and the dev tools name what they use; diagnose
 * reports a site in any state, one without data too, for support).
 */
const DATA_USE: Readonly<Record<string, DataUse>> = {
  status: 'read',
  lookup: 'read',
  changes: 'read',
  deliveries: 'read',
  audit: 'read',
  conflicts: 'read',
  'admin-url': 'read',
  'staff search': 'read',
  'staff show': 'read',
  'staff accrual': 'read',
  'staff residency': 'read',
  'staff locations': 'read',
  'backup list': 'read',
  'ops status': 'read',
  'tunnel status': 'read',
  import: 'change',
  'force-apply': 'change',
  'ack-warnings': 'change',
  'resolve-conflict': 'change',
  pause: 'change',
  resume: 'change',
  'staff sync': 'change',
  'staff submit': 'change',
  'staff purge': 'change',
  backup: 'change',
  compact: 'change',
  restore: 'replace',
};

export function dataUseOf(command: Command): DataUse {
  return DATA_USE[command.name] ?? 'none';
}
