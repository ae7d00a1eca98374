#!/usr/bin/env node
// The first step of `npm run test:system`: its suites test with real tools (Chromium, nginx, libfiu,
// unixODBC with SQLite's ODBC driver, sqlite3, openssl, systemd-analyze, makensis, Prometheus, a C compiler
// with SQLite's headers, a second OS user through setpriv). What is missing is installed from Debian's packages when
// this may (root, with apt-get); otherwise the run stops here naming the one command that fixes it.
// Never a silently skipped suite: in CI (.ci/run) a missing tool fails the run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function has(command, args = ['--version']) {
  const r = spawnSync(command, args, { stdio: 'ignore' });
  return !r.error;
}

function pythonHasOdbcDriver() {
  // Debian's python3 (not a pyenv one): python3-pyodbc is a Debian package.
  const r = spawnSync('/usr/bin/python3', ['-c', 'import pyodbc, sys; sys.exit(0 if any("SQLite3" in d for d in pyodbc.drivers()) else 1)'], { stdio: 'ignore' });
  return r.status === 0;
}

/** [what the tests use, the check, the Debian packages that provide it] */
const NEEDS = [
  ['Chromium (browser tests)', () => fs.existsSync(CHROMIUM), ['chromium']],
  ['nginx (the webhook behind a proxy)', () => has('nginx', ['-v']), ['nginx']],
  ['libfiu (injected I/O errors)', () => has('fiu-run', ['-h']) && has('fiu-ctrl', ['-h']), ['fiu-utils']],
  ['unixODBC + SQLite ODBC driver (the till file through ODBC)', pythonHasOdbcDriver, ['python3-pyodbc', 'unixodbc', 'libsqliteodbc']],
  ['sqlite3 command-line shell', () => has('sqlite3', ['-version']), ['sqlite3']],
  ['openssl (TLS test certificates)', () => has('openssl', ['version']), ['openssl']],
  ['setpriv (a second OS user)', () => has('setpriv', ['--version']), ['util-linux']],
  ['systemd-analyze (the service unit)', () => has('systemd-analyze', ['--version']), ['systemd']],
  ['makensis (the installer script compiles)', () => has('makensis', ['-VERSION']), ['nsis']],
  ['a C compiler and SQLite headers (the re-plan counter extension)', () => has('cc', ['--version']) && fs.existsSync('/usr/include/sqlite3ext.h'), ['gcc', 'libc6-dev', 'libsqlite3-dev']],
  ['python3 (a reader on the system SQLite)', () => has('/usr/bin/python3', ['--version']), ['python3']],
  ['Prometheus and promtool (the shipped alert rules, a real scrape)', () => has('prometheus', ['--version']) && has('promtool', ['--version']), ['prometheus']],
];

function missing() {
  return NEEDS.filter(([, check]) => !check());
}

let absent = missing();
if (absent.length === 0) process.exit(0);

const packages = [...new Set(absent.flatMap(([, , pkgs]) => pkgs))];
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const hasApt = has('apt-get', ['--version']);
const allowed = process.env.POS_SYNC_TEST_NO_INSTALL !== '1';

if (isRoot && hasApt && allowed) {
  console.log(`test prerequisites: installing ${packages.join(' ')} (Debian packages)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  const install = update.status === 0 ? spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { stdio: 'inherit', env }) : update;
  if (install.status !== 0) console.error('test prerequisites: apt-get failed (see above)');
  absent = missing();
}

if (absent.length > 0) {
  const still = [...new Set(absent.flatMap(([, , pkgs]) => pkgs))];
  console.error('The tests need tools that are not installed:');
  for (const [what] of absent) console.error(`  - ${what}`);
  console.error(`Install them with:\n\n  sudo apt-get install -y --no-install-recommends ${still.join(' ')}\n`);
  console.error('(Debian or Ubuntu; set CHROMIUM_PATH if your Chromium lives elsewhere.)');
  process.exit(1);
}
