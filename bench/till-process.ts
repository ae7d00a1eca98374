import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TillBinding } from './till-statements';

/** One timed lookup of the till process: when it started (epoch ms) and how long it took (ms). */
export interface TillSample {
  readonly atEpochMs: number;
  readonly ms: number;
}

export interface TillProcess {
  /** The SQLite the till reads through, as it said when ready. */
  readonly sqliteVersion: string;
  /** Of its warm-up lookups (every PLU of `plus` at every location; none without `plus`), how many found prices. */
  readonly warmUp: { readonly lookups: number; readonly priced: number };
  /** Stops the till (SIGTERM) and returns every lookup it timed. */
  stop(): Promise<TillSample[]>;
  /** For a failed run: stop at once, no samples. */
  kill(): void;
}

/**
 * A till in its own process (bench/till-reader-child.ts) looking PLUs up for today by location,
 * started and ready. PLUs are drawn from 1000..maxPlu, or from `plus` (looked up once each before
 * the till says it is ready, so its page cache and code are warm).
 */
export async function startTillProcess(options: {
  work: string;
  tillFile: string;
  locations: readonly number[];
  maxPlu?: number;
  plus?: readonly string[];
  /** A binding for bench/till-reader-child.ts (default node:sqlite), or `python`: bench/till-reader-child.py on the system's SQLite. */
  reader?: TillBinding | 'python';
}): Promise<TillProcess> {
  const samplesFile = path.join(options.work, 'till-samples.json');
  const python = options.reader === 'python';
  const args = [...(python ? [path.join(__dirname, 'till-reader-child.py')] : [path.join(__dirname, 'till-reader-child.ts'), options.reader ?? 'node:sqlite']), options.tillFile, samplesFile, options.locations.join(','), String(options.maxPlu ?? 0)];
  if (options.plus) {
    const pluFile = path.join(options.work, 'till-plus.json');
    fs.writeFileSync(pluFile, JSON.stringify(options.plus));
    args.push(pluFile);
  }
  const child = python
    ? spawn('python3', args, { cwd: path.join(__dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: path.join(__dirname, '..'), stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8')));
    void exited.then((code) => reject(new Error(`the till process exited (${code}) before it was ready`)));
  });
  const said = /READY till-reader \(SQLite ([0-9.]+); (\d+) of (\d+) lookups priced\)/.exec(ready);
  if (!said) {
    child.kill('SIGKILL');
    throw new Error(`the till process said ${JSON.stringify(ready.trim())} instead of READY`);
  }
  return {
    sqliteVersion: said[1]!,
    warmUp: { lookups: Number(said[3]), priced: Number(said[2]) },
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      if (code !== 0) throw new Error(`the till process exited with ${code}`);
      const raw = JSON.parse(fs.readFileSync(samplesFile, 'utf8')) as number[];
      const samples: TillSample[] = [];
      for (let i = 0; i + 1 < raw.length; i += 2) samples.push({ atEpochMs: raw[i]!, ms: raw[i + 1]! });
      return samples;
    },
    kill: () => void child.kill('SIGKILL'),
  };
}
