import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './child-agent';

/**
 * The package as a site gets it: `npm pack` of a checkout, then `npm install -g` of the tarball
 * into a prefix of its own, from a folder outside any checkout (so no project .npmrc applies) with
 * strict allow-scripts on (so any install script would fail the install).
 */

/** npm's environment without the variables `npm run`/`npm test` set for the project (its config, scripts). */
export function plainNpmEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return { ...env, ...extra };
}

/**
 * Packs `checkout` into `into` and returns the tarball's path. `scripts: false` packs what is built
 * (the test suite builds dist/ and renderer/dist/ first; prepack would build them again under the
 * feet of other tests); `true` runs prepack as a release does.
 */
export function packCheckout(checkout: string, into: string, options: { scripts: boolean } = { scripts: false }): string {
  fs.mkdirSync(into, { recursive: true });
  const args = ['pack', '--pack-destination', into, '--json', ...(options.scripts ? [] : ['--ignore-scripts'])];
  const out = execFileSync('npm', args, { cwd: checkout, encoding: 'utf8', env: plainNpmEnv(), maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
  const [info] = JSON.parse(out.slice(out.indexOf('['))) as { filename: string }[];
  return path.join(into, info!.filename);
}

export interface InstallResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The installed command. */
  readonly bin: string;
}

/** `npm install -g TARBALL --prefix PREFIX`, as a site would, run from `cwd` (outside any checkout). */
export function installGlobally(tarball: string, prefix: string, cwd: string): InstallResult {
  // npm's strict allow-scripts preflight needs the global folder to exist.
  fs.mkdirSync(path.join(prefix, 'lib'), { recursive: true });
  const r = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--strict-allow-scripts=true', '--no-audit', '--no-fund', tarball], {
    cwd,
    encoding: 'utf8',
    env: plainNpmEnv(),
    timeout: 300_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, bin: path.join(prefix, 'bin', 'pos-sync-agent') };
}

export const REPO = REPO_ROOT;

/** True when this checkout's compiled output exists (the suite builds it before the tests). */
export function isBuilt(checkout: string = REPO_ROOT): boolean {
  return fs.existsSync(path.join(checkout, 'dist', 'agent', 'cli.js')) && fs.existsSync(path.join(checkout, 'renderer', 'dist', 'app.js'));
}
