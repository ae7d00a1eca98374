import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { dateOf, dayOf, encode, generateChains, todayInZone } from '../src/dev/publisher';
import { openReadOnly, storeFilePath } from '../src/store/database';
import { spawnAgent, writeConfig } from '../src/dev/child-agent';
import { recordResult } from './results';
import { post } from './small-acks';

/**
 * Where a first publication's receipt and apply spend their CPU time: the L publication of `npm run
 * bench` POSTed to an agent (the compiled build) started with `--cpu-prof`, which writes one profile
 * per thread when the agent stops. Prints each thread's busiest functions by self time (native calls,
 * SQLite's included, are counted under the JavaScript function that made them), and where the profiles
 * are, for Chrome DevTools, and records every thread's busiest functions (bench/results/profile/,
 * unless --no-record). Usage: npm run bench:profile [-- --items N] [-- --keep DIR]
 */

const { values: args } = parseArgs({ options: { items: { type: 'string', default: '5000' }, keep: { type: 'string' }, 'no-record': { type: 'boolean', default: false } } });

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

interface ThreadProfile {
  file: string;
  busyMs: number;
  totalMs: number;
  /** The busiest functions by self time, with their share of the thread's busy time. */
  top: { fn: string; ms: number; share: number }[];
}

function summarise(file: string): ThreadProfile {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id)!;
    const url = node.callFrame.url.replace(/^.*\/(dist|node_modules)\//, '$1/');
    const key = `${node.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${node.callFrame.lineNumber + 1}` : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  const idle = (self.get('(idle)') ?? 0) + (self.get('(program)') ?? 0);
  const busy = total - idle;
  const top = [...self.entries()].filter(([k]) => k !== '(idle)' && k !== '(program)').sort((a, b) => b[1] - a[1]).slice(0, 15);
  return { file: path.basename(file), busyMs: busy / 1000, totalMs: total / 1000, top: top.map(([fn, us]) => ({ fn, ms: us / 1000, share: us / Math.max(1, busy) })) };
}

function describe(t: ThreadProfile): string {
  return [
    `${t.file}: ${t.busyMs.toFixed(0)} ms busy of ${t.totalMs.toFixed(0)} ms profiled`,
    ...t.top.map((f) => `  ${f.ms.toFixed(0).padStart(7)} ms  ${(f.share * 100).toFixed(1).padStart(5)} %  ${f.fn}`),
  ].join('\n');
}

async function main(): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-profile-'));
  const profiles = args.keep ?? path.join(work, 'profiles');
  fs.mkdirSync(profiles, { recursive: true });
  const dataDir = path.join(work, 'data');
  fs.mkdirSync(dataDir);
  const today = todayInZone(Intl.DateTimeFormat().resolvedOptions().timeZone);
  const [chain] = generateChains({ seed: 2026, locations: 1, updatesPerLocation: 1, startDate: dateOf(dayOf(today) - 30), days: 365, itemsPerLocation: Number(args.items), tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12 });
  const update = chain!.updates[0]!;
  const body = encode(update);
  const config = writeConfig(dataDir, { dataDir, webhook: { port: 0, maxBodyBytes: 256 * 1024 * 1024 }, admin: { enabled: false }, sync: { pollIntervalMs: 1000, baselineSettleSeconds: 0 } });
  let ackMs = NaN;
  let appliedAfterAckMs = NaN;
  const agent = await spawnAgent(config, { built: true, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profiles}`] });
  try {
    const started = performance.now();
    const { status } = await post(agent.url, body);
    if (status !== 200) throw new Error(`the agent answered ${status}`);
    const acked = performance.now();
    const reader = openReadOnly(storeFilePath(dataDir, 'agent'));
    const state = reader.prepare<[number, number], { state: string }>('SELECT state FROM inbox WHERE location_id = ? AND change_sequence = ?');
    while (state.get(update.locationId, update.changeSequence)?.state !== 'applied') await new Promise((r) => setTimeout(r, 5));
    reader.close();
    ackMs = acked - started;
    appliedAfterAckMs = performance.now() - acked;
    process.stdout.write(`${(body.length / 1e6).toFixed(1)} MB: 200 after ${ackMs.toFixed(0)} ms, applied ${appliedAfterAckMs.toFixed(0)} ms later\n\n`);
  } finally {
    await agent.stop();
  }
  const threads = fs.readdirSync(profiles).filter((f) => f.endsWith('.cpuprofile')).sort().map((file) => summarise(path.join(profiles, file)));
  for (const t of threads) process.stdout.write(`${describe(t)}\n\n`);
  recordResult('profile', { items: Number(args.items), payloadBytes: body.length, ackMs, appliedAfterAckMs, threads });
  process.stdout.write(`profiles (open in Chrome DevTools, Performance): ${profiles}\n`);
  if (!args.keep) fs.rmSync(path.join(work, 'data'), { recursive: true, force: true });
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
