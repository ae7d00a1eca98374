import { AppError } from '../../errors';
import { jsonBody as readJsonBody } from '../../http/body';

/** Helpers the window's routers share: query numbers, the JSON body reader, who acts. */

export function positiveInt(value: unknown, name: string): number {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) throw new AppError('invalid_parameter', 400, `${name} must be a whole number`);
  return Number(value);
}

export function optionalPositiveInt(value: unknown, name: string): number | null {
  return value === undefined || value === '' ? null : positiveInt(value, name);
}

/** The small JSON bodies the window sends (settings, reasons, flags): application/json, at most 16 KiB, never compressed. */
export const jsonBody = readJsonBody({ limit: 16 * 1024, decompress: false });

/** Who acts through the window, for the audit log: the person's name (asked by the window) and the account. */
export { windowActor, windowActorForLog } from '../person';
