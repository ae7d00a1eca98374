import type { IncomingMessage } from 'node:http';
import { operatorName } from '../core';
import { header } from '../http/request';

/**
 * The person using the status window: the window asks their name once per window session and sends it
 * with every request (percent-encoded, so any name fits a header). It goes into the audit log with
 * each action, never into the agent's log (personal data).
 */
export const PERSON_HEADER = 'x-operator-name';

/** The name sent with a request, or null when none (or not a usable name) was given. */
export function personOf(req: Pick<IncomingMessage, 'headers'>): string | null {
  const raw = header(req, PERSON_HEADER);
  if (!raw) return null;
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    return null;
  }
  if (/\p{Cc}/u.test(name)) return null;
  name = name.normalize('NFC').trim().replace(/ +/g, ' ');
  // Letters, marks, digits, spaces and the punctuation of names; nothing that could pass for markup or a new line.
  if (name.length === 0 || name.length > 60 || !/^[\p{L}\p{M}\p{N} .'’-]+$/u.test(name)) return null;
  return name;
}

/** The audit log's actor for a window request: the person, then the OS account that runs the window. */
export function windowActor(req: Pick<IncomingMessage, 'headers'>): string {
  const person = personOf(req);
  return person ? `${person} (status window on ${operatorName()})` : `${operatorName()} (status window)`;
}

/** For the agent's log: the OS account only, never the person's name. */
export function windowActorForLog(): string {
  return `${operatorName()} (status window)`;
}
