import fs from 'node:fs';
import path from 'node:path';

/**
 * The agent's version from its package.json. The file sits one folder up from the sources (src/) and
 * two from the compiled code (dist/src/), so both are tried; the name check keeps a neighbouring
 * project's package.json from answering.
 */
export function appVersion(): string {
  for (const candidate of [path.join(__dirname, '..', 'package.json'), path.join(__dirname, '..', '..', 'package.json')]) {
    try {
      const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'pos-sync-agent') return pkg.version ?? 'unknown';
    } catch {
      // not there: try the next place
    }
  }
  return 'unknown';
}
