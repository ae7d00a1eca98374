import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { dateOf, dayOf, encode, generateChains, todayInZone } from '../src/dev/publisher';
import { openReadOnly, storeFilePath } from '../src/store/database';
import { spawnAgent, writeConfig } from '../src/dev/child-agent';

/**
 * Where a first publication's receipt and apply spend their CPU time: the L publication of `npm run
 * bench` POSTed to an agent (the compiled build) started with `--cpu-prof`, which writes one profile
 * per thread when the agent stops. Prints each thread's busiest functions by self time (native calls,
 * SQLite's included, are counted under the JavaScript function that made them), and where the profiles
 * are, for Chrome DevTools. Usage: npm run bench:profile [-- --items N] [-- --keep DIR]
 */

const { values: args } = parseArgs({ options: { items: { type: 'string', default: '5000' }, keep: { type: 'string' } } });

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

function post(url: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function summarise(file: string): string {
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
  return [
    `${path.basename(file)}: ${(busy / 1000).toFixed(0)} ms busy of ${(total / 1000).toFixed(0)} ms profiled`,
    ...top.map(([k, us]) => `  ${(us / 1000).toFixed(0).padStart(7)} ms  ${((us / Math.max(1, busy)) * 100).toFixed(1).padStart(5)} %  ${k}`),
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
  const agent = await spawnAgent(config, { built: true, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profiles}`] });
  try {
    const started = performance.now();
    const status = await post(agent.url, body);
    if (status !== 200) throw new Error(`the agent answered ${status}`);
    const acked = performance.now();
    const reader = openReadOnly(storeFilePath(dataDir, 'agent'));
    const state = reader.prepare<[number, number], { state: string }>('SELECT state FROM inbox WHERE location_id = ? AND change_sequence = ?');
    while (state.get(update.locationId, update.changeSequence)?.state !== 'applied') await new Promise((r) => setTimeout(r, 5));
    reader.close();
    process.stdout.write(`${(body.length / 1e6).toFixed(1)} MB: 200 after ${(acked - started).toFixed(0)} ms, applied ${(performance.now() - acked).toFixed(0)} ms later\n\n`);
  } finally {
    await agent.stop();
  }
  for (const file of fs.readdirSync(profiles).filter((f) => f.endsWith('.cpuprofile')).sort()) process.stdout.write(`${summarise(path.join(profiles, file))}\n\n`);
  process.stdout.write(`profiles (open in Chrome DevTools, Performance): ${profiles}\n`);
  if (!args.keep) fs.rmSync(path.join(work, 'data'), { recursive: true, force: true });
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
