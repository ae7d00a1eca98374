import type { Db } from './database';
import { AppError } from '../errors';
import { describeUpdateName, formatUpdateName, UPDATE_NAME_HELP, type UpdateName } from '../domain/update-name';

/** A stored update an operator named (domain/update-name.ts). */
export interface NamedUpdate {
  readonly inboxId: number;
  readonly locationId: number;
  readonly changeSequence: number;
  readonly state: string;
}

interface Row {
  readonly id: number;
  readonly location_id: number;
  readonly change_sequence: number;
  readonly state: string;
}

const toNamed = (r: Row): NamedUpdate => ({ inboxId: r.id, locationId: r.location_id, changeSequence: r.change_sequence, state: r.state });

/**
 * Finds the inbox row a name means. Under one LOCATION:SEQUENCE the inbox can hold more than one row
 * (a conflicting redelivery is kept beside the original): the waiting one is meant when there is one,
 * else the original (the lowest id that is not a conflict), so a refusal then says what became of it.
 * A bare number is tried as both an inbox number and a ChangeSequence, in every location and state;
 * it must come down to one update, or the error lists the names to choose from.
 */
export function resolveUpdateName(db: Db, name: UpdateName): NamedUpdate {
  const columns = 'SELECT id, location_id, change_sequence, state FROM inbox';
  const preferred = "ORDER BY state = 'pending' DESC, state = 'conflict', id";
  let row: Row | undefined;
  if (name.kind === 'inbox') row = db.prepare<[number], Row>(`${columns} WHERE id = ?`).get(name.inboxId);
  else if (name.kind === 'sequence') {
    row = db.prepare<[number, number], Row>(`${columns} WHERE location_id = ? AND change_sequence = ? ${preferred} LIMIT 1`).get(name.locationId, name.changeSequence);
  } else {
    // By inbox number, and by ChangeSequence per known location through the (location_id,
    // change_sequence) index (CROSS JOIN keeps that loop order): no scan of a large inbox.
    const rows = db
      .prepare<[number, number], Row>(
        `SELECT * FROM (${columns} WHERE id = ?
           UNION SELECT i.id, i.location_id, i.change_sequence, i.state FROM known_locations k CROSS JOIN inbox i ON i.location_id = k.location_id AND i.change_sequence = ?)
         ${preferred}`,
      )
      .all(name.value, name.value);
    // One candidate per update name: the rows of a conflicting redelivery are the same update.
    const seen = new Set<string>();
    const distinct = rows.filter((r) => {
      const key = formatUpdateName(r.location_id, r.change_sequence);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    // Every match counts, applied ones too: `force-apply 1047` must never reach some other waiting
    // update whose inbox number happens to be 1047 while update 1047 itself is already applied.
    const candidates = distinct;
    if (candidates.length > 1) {
      const names = candidates.map((r) => (r.id === name.value ? `#${r.id} (${formatUpdateName(r.location_id, r.change_sequence)})` : formatUpdateName(r.location_id, r.change_sequence)));
      throw new AppError('update_name_ambiguous', 409, `${name.value} could mean ${names.join(' or ')}: ${UPDATE_NAME_HELP}`);
    }
    row = candidates[0];
  }
  if (!row) throw new AppError('update_not_found', 404, `no stored update ${describeUpdateName(name)}: ${UPDATE_NAME_HELP}`);
  return toNamed(row);
}
