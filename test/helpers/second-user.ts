import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';

/**
 * The tests that check file and socket permissions run a program as `nobody` (setpriv), and what that
 * program runs or reads (the Node binary, better-sqlite3) must be readable by nobody. A clone under a
 * private folder (a 0750 home, a `mktemp -d` folder) is not: there each such path is copied once to a
 * folder nobody can reach (folders 0755, files 0644, programs 0755) and the copy is used instead, so
 * the tests work wherever the project is cloned.
 */

export function nobodyCanRead(target: string): boolean {
  return spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'test', '-r', target], { cwd: '/', timeout: 30_000 }).status === 0;
}

let shared: string | null = null;
const copies = new Map<string, string>();

/** A folder for the copies that nobody may pass through, removed when the test file ends. */
function sharedFolder(): string {
  if (shared === null) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-for-nobody-'));
    fs.chmodSync(dir, 0o755);
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    shared = dir;
  }
  return shared;
}

function openModes(target: string): void {
  const stat = fs.statSync(target);
  if (stat.isDirectory()) {
    fs.chmodSync(target, 0o755);
    for (const entry of fs.readdirSync(target)) openModes(path.join(target, entry));
  } else fs.chmodSync(target, stat.mode & 0o111 ? 0o755 : 0o644);
}

/**
 * `target` (a file or a folder) where nobody can read it: the path itself when nobody can already
 * (CI's checkout), else a copy in a folder nobody can reach.
 */
export function reachableByNobody(target: string): string {
  const probe = fs.statSync(target).isDirectory() ? path.join(target, fs.readdirSync(target)[0] ?? '.') : target;
  if (nobodyCanRead(probe)) return target;
  const known = copies.get(target);
  if (known) return known;
  const copy = path.join(sharedFolder(), `${copies.size}-${path.basename(target)}`);
  fs.cpSync(target, copy, { recursive: true });
  openModes(copy);
  copies.set(target, copy);
  return copy;
}
