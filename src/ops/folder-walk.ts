import fs from 'node:fs';
import path from 'node:path';

/**
 * Visits each entry of `dir` and of its sub-folders down to `depth` more levels, with the entry's own
 * `lstat` (a link is reported as a link, never followed). `visit` returns whether to go into a folder.
 * Entries that vanish or cannot be read are passed over: both callers check what is there now, and a
 * folder they cannot list is one they cannot change either. The start-up ownership check and the
 * tightening of modes walk the agent's folders this way.
 */
export function walkFolder(dir: string, depth: number, visit: (file: string, stat: fs.Stats) => boolean): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const file = path.join(dir, name);
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(file);
    } catch {
      continue;
    }
    if (visit(file, stat) && stat.isDirectory() && depth > 0) walkFolder(file, depth - 1, visit);
  }
}
