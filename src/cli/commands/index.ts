import type { Command } from '../command';
import { ackWarnings, configShow, deliveries, forceApply, importCommand, lookup, serve, status } from './sync';

/** Every CLI command. Add a module's commands here. */
export const COMMANDS: readonly Command[] = [serve, importCommand, status, lookup, forceApply, ackWarnings, deliveries, configShow];
