/**
 * One name for an update everywhere (CLI, status window, docs, support): `LOCATION:SEQUENCE`, the
 * location's ID and head office's ChangeSequence, e.g. `118:1047`. Those are the numbers a manager
 * sees in the window and support sees in head office's system. The agent's own inbox number is still
 * accepted as `#N`; a bare number is accepted only where it names one update (store/update-names.ts).
 * Pure and free of Node imports: the renderer bundles this file for the same wording.
 */

export type UpdateName =
  | { readonly kind: 'sequence'; readonly locationId: number; readonly changeSequence: number }
  | { readonly kind: 'inbox'; readonly inboxId: number }
  /** A bare number: an inbox number or a ChangeSequence, resolved against what is stored. */
  | { readonly kind: 'number'; readonly value: number };

/** Head office's IDs and sequences are positive integers; anything past 2^53 could not round-trip. */
function positiveInteger(text: string): number | null {
  if (!/^\d{1,15}$/.test(text)) return null;
  const n = Number(text);
  return n > 0 ? n : null;
}

/** Parses `118:1047`, `#12` or `1047` (spaces around the parts allowed); null when it is none of them. */
export function parseUpdateName(text: string): UpdateName | null {
  const trimmed = text.trim();
  const pair = /^(\d+)\s*:\s*(\d+)$/.exec(trimmed);
  if (pair) {
    const locationId = positiveInteger(pair[1]!);
    const changeSequence = positiveInteger(pair[2]!);
    return locationId !== null && changeSequence !== null ? { kind: 'sequence', locationId, changeSequence } : null;
  }
  const inbox = /^#\s*(\d+)$/.exec(trimmed);
  if (inbox) {
    const inboxId = positiveInteger(inbox[1]!);
    return inboxId === null ? null : { kind: 'inbox', inboxId };
  }
  const value = positiveInteger(trimmed);
  return value === null ? null : { kind: 'number', value };
}

/** The name of an update as every text shows it: `118:1047`. */
export function formatUpdateName(locationId: number, changeSequence: number): string {
  return `${locationId}:${changeSequence}`;
}

/** How a name reads back in a message: `118:1047`, `#12`, `1047`. */
export function describeUpdateName(name: UpdateName): string {
  if (name.kind === 'sequence') return formatUpdateName(name.locationId, name.changeSequence);
  return name.kind === 'inbox' ? `#${name.inboxId}` : String(name.value);
}

/** The usage text shared by the CLI and the API's error. */
export const UPDATE_NAME_HELP =
  "name an update as LOCATION:SEQUENCE (e.g. 118:1047, as status and the window show it), or '#N' for the inbox number (quoted: shells read # as a comment)";
