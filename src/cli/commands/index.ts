import { adminUrl } from './admin-url';
import { CONFLICT_COMMANDS } from './conflicts';
import type { Command } from '../command';
import { changes } from './changes';
import { devPublisher } from './dev-publisher';
import { OPS_COMMANDS } from './ops';
import { STAFF_COMMANDS } from './staff';
import { ackWarnings, configShow, deliveries, forceApply, importCommand, lookup, pause, resume, serve, status } from './sync';

/** Every CLI command. Add a module's commands here. */
export const COMMANDS: readonly Command[] = [serve, importCommand, status, lookup, changes, forceApply, ...CONFLICT_COMMANDS, ackWarnings, pause, resume, deliveries, configShow, ...STAFF_COMMANDS, ...OPS_COMMANDS, adminUrl, devPublisher];
