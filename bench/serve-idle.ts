/**
 * The idle memory of `pos-sync-agent serve` as a site runs it (bin/pos-sync-agent.cjs, the build in
 * dist/, the status window's server on, the site's defaults otherwise), read from /proc (Linux):
 * once its applier thread has rested after the start's drain, and again once it has applied a first
 * publication and rested again, which is how a site's agent idles from its first delivery on.
 * Issue 29's idle target is read against both. `npm run bench` runs it (bench/run.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort, writeConfig } from '../src/dev/child-agent';
import { openReadOnly, storeFilePath } from '../src/store/database';
import { APPLIER_REST_AFTER_MS } from '../src/sync/applier-host';
import { post } from './small-acks';

/** How long the bench waits for an idle agent's applier thread to rest before it gives up. */
export const REST_DEADLINE_MS = APPLIER_REST_AFTER_MS + 60_000;

/** How long RSS must stay the same for the bench to call it settled, and the most it waits for that. */
const SETTLE_QUIET_MS = 10_000;
const SETTLE_MAX_MS = 60_000;

/**
 * RSS once it has stopped changing after the applier's rest: the thread's memory is not all handed
 * back at once (some seconds later the rest of it goes), and a site's idle agent is the settled one.
 */
export async function settledIdleRss(read: () => Promise<number> | number): Promise<{ rssBytes: number; settledAfterMs: number }> {
  const started = performance.now();
  let rss = await read();
  let since = started;
  while (performance.now() - since < SETTLE_QUIET_MS) {
    if (performance.now() - started > SETTLE_MAX_MS) throw new Error(`RSS did not settle within ${SETTLE_MAX_MS / 1000} s of the applier's rest`);
    await new Promise((r) => setTimeout(r, 500));
    const now = await read();
    if (now !== rss) {
      rss = now;
      since = performance.now();
    }
  }
  return { rssBytes: rss, settledAfterMs: since - started };
}

/** A process's resident memory now (Linux: VmRSS in /proc/PID/status). */
export function vmRssBytes(pid: number): number {
  const kib = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  if (!Number.isFinite(kib)) throw new Error('no VmRSS in /proc/PID/status');
  return kib * 1024;
}

/** The names of a process's threads (Linux: /proc/PID/task/TID/comm). */
function threadNames(pid: number): string[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    } catch {
      return '';
    }
  });
}

/** What an idle serve holds, once settled. */
export interface IdleMemory {
  readonly rssBytes: number;
  /** Of the RSS: pages of files (the node binary, ICU's data in it, libraries), and anonymous memory (heaps, stacks, malloc), from /proc/PID/smaps_rollup. */
  readonly fileBackedBytes: number;
  readonly anonymousBytes: number;
  /** Of the pages of files: the node binary's code (executable mappings), its read-only data (V8's snapshot, Node's own JavaScript, what of ICU's data is read), and every other file (libraries, better-sqlite3). From /proc/PID/smaps. */
  readonly fileBreakdown: { readonly nodeCodeBytes: number; readonly nodeDataBytes: number; readonly otherFilesBytes: number };
  /** From the applier's rest to the last change of RSS (it then stayed the same for SETTLE_QUIET_MS). */
  readonly settledAfterMs: number;
  /** The agent's own threads (named) when measured. */
  readonly agentThreads: string[];
}

export interface ServeIdle extends IdleMemory {
  /** What ran: `pos-sync-agent serve` through bin/, with the status window on and staff off. */
  readonly command: string;
  /** Just before the applier thread (from the start's drain) rested: what the rest gives back is the difference. */
  readonly awakeRssBytes: number;
  /** From `Receiving menu cycle updates` on stdout to the applier thread's end. */
  readonly restWaitMs: number;
  /** The node options this serve ran with (none: as a site runs it). */
  readonly nodeOptions: string[];
  /** The same serve once it has applied a first publication (`afterApply`) and its applier has rested again. */
  readonly afterApply?: IdleMemory & { readonly payloadBytes: number; readonly items: number; readonly rangeRows: number; readonly waitMs: number };
}

/** The pages of files in a process's RSS, split by what they are (IdleMemory.fileBreakdown). Linux only. */
function fileBreakdown(pid: number): IdleMemory['fileBreakdown'] {
  let nodeCodeBytes = 0;
  let nodeDataBytes = 0;
  let otherFilesBytes = 0;
  let kind: 'code' | 'data' | 'other' | null = null;
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ (\S{4}) \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (header) {
      const [, perms, inode, file] = header;
      if (inode === '0' || !file || file.startsWith('[')) kind = null;
      else if (file === process.execPath || path.basename(file) === 'node') kind = perms!.includes('x') ? 'code' : 'data';
      else kind = 'other';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss || kind === null) continue;
    const bytes = Number(rss[1]) * 1024;
    if (kind === 'code') nodeCodeBytes += bytes;
    else if (kind === 'data') nodeDataBytes += bytes;
    else otherFilesBytes += bytes;
  }
  return { nodeCodeBytes, nodeDataBytes, otherFilesBytes };
}

/** Waits for the applier thread to be gone, then for RSS to settle, and reads the process's memory. */
async function restedIdle(pid: number, since: number, what: string): Promise<IdleMemory> {
  while (threadNames(pid).includes('applier')) {
    if (performance.now() - since > REST_DEADLINE_MS) throw new Error(`serve's applier thread did not rest within ${REST_DEADLINE_MS / 1000} s ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const settled = await settledIdleRss(() => vmRssBytes(pid));
  const agentThreads = threadNames(pid).filter((n) => ['MainThread', 'receiver', 'applier'].includes(n));
  const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kibOf = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
  const anonymousBytes = kibOf('Anonymous') * 1024;
  // The agent maps no shared memory: what is not anonymous is pages of files.
  const fileBackedBytes = (kibOf('Rss') - kibOf('Anonymous')) * 1024;
  if (!Number.isFinite(anonymousBytes) || !Number.isFinite(fileBackedBytes)) throw new Error('no Rss or Anonymous in /proc/PID/smaps_rollup');
  return { rssBytes: settled.rssBytes, settledAfterMs: settled.settledAfterMs, fileBackedBytes, anonymousBytes, fileBreakdown: fileBreakdown(pid), agentThreads };
}

/** A first publication for serve to apply: its bytes and the inbox row that says when it is applied. */
export interface FirstPublication {
  readonly body: Buffer;
  readonly locationId: number;
  readonly changeSequence: number;
  readonly items: number;
}

/** With the site's default settle time (sync.baselineSettleSeconds) a first publication waits that long. */
const APPLIED_DEADLINE_MS = 5 * 60_000;

/**
 * serve's idle memory, once its applier thread has rested after the start's drain, and with
 * `afterApply` again once it has applied that publication (received through its webhook as head
 * office sends it, applied at the site's default settle deadline) and rested again.
 */
export async function serveIdle(work: string, options: { readonly nodeOptions?: string[]; readonly afterApply?: FirstPublication } = {}): Promise<ServeIdle> {
  const nodeOptions = options.nodeOptions ?? [];
  const dataDir = fs.mkdtempSync(path.join(work, 'serve-'));
  const config = writeConfig(dataDir, { dataDir, webhook: { port: await freePort() }, admin: { port: await freePort() } });
  const bin = path.join(__dirname, '..', 'bin', 'pos-sync-agent.cjs');
  const child = spawn(process.execPath, [...nodeOptions, bin, 'serve', '--no-login-link', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const deadline = performance.now() + 60_000;
    let webhookUrl: string | undefined;
    while (!(webhookUrl = /Receiving menu cycle updates at (\S+)/.exec(output)?.[1])) {
      if (child.exitCode !== null || performance.now() > deadline) throw new Error(`pos-sync-agent serve did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const pid = child.pid!;
    const started = performance.now();
    // The last reading while the applier thread (from the start's drain) still runs: what its rest
    // gives back is the difference to the reading after it, a quarter of a second apart.
    let awakeRssBytes: number | null = null;
    while (threadNames(pid).includes('applier')) {
      if (performance.now() - started > REST_DEADLINE_MS) throw new Error(`serve's applier thread did not rest within ${REST_DEADLINE_MS / 1000} s`);
      const rss = vmRssBytes(pid);
      if (threadNames(pid).includes('applier')) awakeRssBytes = rss;
      await new Promise((r) => setTimeout(r, 250));
    }
    if (awakeRssBytes === null) throw new Error("serve's applier thread rested before the bench could read serve's memory with it");
    const restWaitMs = performance.now() - started;
    const fresh = await restedIdle(pid, started, 'of its start');
    let afterApply: ServeIdle['afterApply'];
    const publication = options.afterApply;
    if (publication) {
      // The token serve made at its first start, as its operator gives it to head office.
      const shown = spawnSync(process.execPath, [bin, 'secrets', 'show', 'webhook.bearerToken', '--config', config, '--json'], { encoding: 'utf8' });
      if (shown.status !== 0) throw new Error(`secrets show webhook.bearerToken failed:\n${shown.stderr}`);
      const token = (JSON.parse(shown.stdout) as { value?: unknown }).value;
      if (typeof token !== 'string') throw new Error(`secrets show --json printed no token: ${shown.stdout}`);
      const sent = performance.now();
      const ack = await post(webhookUrl, publication.body, token);
      if (ack.status !== 200) throw new Error(`serve answered ${ack.status} to the first publication:\n${output}`);
      const agentDb = openReadOnly(storeFilePath(dataDir, 'agent'));
      let rangeRows: number;
      try {
        const state = agentDb.prepare('SELECT state FROM inbox WHERE location_id = ? AND change_sequence = ?');
        for (;;) {
          const row = state.get(publication.locationId, publication.changeSequence) as { state: string } | undefined;
          if (row?.state === 'applied') break;
          if (row !== undefined && row.state !== 'pending') throw new Error(`serve marked the first publication ${row.state} instead of applying it`);
          if (performance.now() - sent > APPLIED_DEADLINE_MS) throw new Error(`serve did not apply the first publication within ${APPLIED_DEADLINE_MS / 1000} s`);
          await new Promise((r) => setTimeout(r, 250));
        }
      } finally {
        agentDb.close();
      }
      const till = openReadOnly(storeFilePath(dataDir, 'till'));
      try {
        rangeRows = (till.prepare('SELECT (SELECT count(*) FROM price_ranges) + (SELECT count(*) FROM availability_ranges) AS n').get() as { n: number }).n;
      } finally {
        till.close();
      }
      const waitMs = performance.now() - sent;
      afterApply = { ...(await restedIdle(pid, performance.now(), 'after the first publication')), payloadBytes: publication.body.length, items: publication.items, rangeRows, waitMs };
    }
    return { command: 'pos-sync-agent serve (status window on, staff off)', ...fresh, awakeRssBytes, restWaitMs, nodeOptions, ...(afterApply ? { afterApply } : {}) };
  } finally {
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
