/**
 * A plain background writer for the till-lookup baseline (bench/run.ts, L): at the applier's CPU
 * priority (nice 10), it repeats the raw row-insert baseline (bench/raw-rows.ts) into its own file
 * until it is killed. Usage: node --import tsx bench/plain-writer-child.ts DB_FILE ROWS
 * Prints READY once its file is open, before the first row.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createRawRowsTable, insertRawRows } from './raw-rows';

const [file, rowsText] = parseArgs({ allowPositionals: true }).positionals;
if (!file || !rowsText) throw new Error('usage: plain-writer-child.ts DB_FILE ROWS');
os.setPriority(10);
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
process.stdout.write('READY plain-writer\n');
// Killed (SIGKILL) by the bench when its window ends; each pass is one transaction.
for (;;) {
  insertRawRows(db, createRawRowsTable(db), Number(rowsText));
}
