/**
 * `npm run bench:metrics` — what a Prometheus scraper costs head office's calls: the small-delivery
 * ack's p99 with and without a scraper reading GET /metrics, against one real agent (`serve`, the
 * compiled build, its own process), in the same run. The two conditions alternate in rounds (so a
 * busier minute of the machine falls on both), the scraper reads every `--scrape-ms` (default 1000:
 * a site scraped every 15 s would give too few scrapes in a short run to be seen at all; faster is
 * the harsher test). The small deliveries are bench/small-acks.ts's, as `npm run bench` sends them.
 * Prints the figures and records them (bench/results/metrics/, bench/results.ts) unless --no-record.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { freePort, writeConfig } from '../src/dev/child-agent';
import { recordResult } from './results';
import { SmallAcks } from './small-acks';
import { percentile } from './stats';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '6' },
    acks: { type: 'string', default: '300' },
    'scrape-ms': { type: 'string', default: '1000' },
    'gap-ms': { type: 'string', default: '5' },
    json: { type: 'boolean', default: false },
    'no-record': { type: 'boolean', default: false },
  },
});
const rounds = Number(args.rounds);
const acksPerRound = Number(args.acks);
const scrapeMs = Number(args['scrape-ms']);
const gapMs = Number(args['gap-ms']);
for (const [key, v] of [['rounds', rounds], ['acks', acksPerRound], ['scrape-ms', scrapeMs], ['gap-ms', gapMs]] as const) {
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${key} must be a non-negative number`);
}

const ROOT = path.resolve(__dirname, '..');
const METRICS_TOKEN = 'bench-metrics-token-0123456789abcdef';
/** `serve` takes no delivery without a webhook token (src/ops/webhook-token.ts): the bench gives it one. */
const WEBHOOK_TOKEN = 'bench-webhook-token-0123456789abcdef';

function request(url: string, options: { method: string; headers?: Record<string, string>; body?: Buffer }): Promise<{ status: number; ms: number; bytes: number }> {
  const u = new URL(url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: options.method, headers: options.headers, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

async function startServe(configFile: string): Promise<{ child: ChildProcess; webhookUrl: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'pos-sync-agent.cjs'), 'serve', '--config', configFile], {
    cwd: ROOT,
    env: { ...process.env, POS_SYNC_SECRET_METRICS_BEARERTOKEN: METRICS_TOKEN, POS_SYNC_SECRET_WEBHOOK_BEARERTOKEN: WEBHOOK_TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr!.on('data', (c) => (out += c));
  const webhookUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`agent did not start:\n${out}`)), 30_000);
    child.stdout!.on('data', (c) => {
      out += c;
      const m = /Receiving menu cycle updates at (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`agent exited with ${code}:\n${out}`)));
  });
  return { child, webhookUrl };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pos-sync-bench-metrics-'));
  const adminPort = await freePort();
  const configFile = writeConfig(dir, {
    dataDir: dir,
    webhook: { host: '127.0.0.1', port: 0 },
    admin: { port: adminPort },
    sync: { baselineSettleSeconds: 0 },
    backup: { enabled: false },
    retention: { enabled: false },
  });
  const { child, webhookUrl } = await startServe(configFile);
  const metricsUrl = `http://127.0.0.1:${adminPort}/metrics`;
  const small = new SmallAcks(webhookUrl, WEBHOOK_TOKEN);
  const noScraper: number[] = [];
  const withScraper: number[] = [];
  const scrapes: number[] = [];
  let scrapeBytes = 0;
  try {
    // Warm-up: the first deliveries pay for JIT and the files' first pages.
    await small.sendCount(100, 0, []);
    const probe = await request(metricsUrl, { method: 'GET', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    if (probe.status !== 200) throw new Error(`/metrics answered ${probe.status}`);
    for (let round = 0; round < rounds; round++) {
      for (const scraping of round % 2 === 0 ? [false, true] : [true, false]) {
        let stop = false;
        let scraper: Promise<void> = Promise.resolve();
        if (scraping) {
          scraper = (async () => {
            while (!stop) {
              const r = await request(metricsUrl, { method: 'GET', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
              if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
              scrapes.push(r.ms);
              scrapeBytes = r.bytes;
              const wait = scrapeMs;
              const until = performance.now() + wait;
              while (!stop && performance.now() < until) await new Promise((res) => setTimeout(res, Math.min(50, wait)));
            }
          })();
        }
        const into = scraping ? withScraper : noScraper;
        await small.sendCount(acksPerRound, gapMs, into);
        stop = true;
        await scraper;
      }
    }
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const figures = {
    acksPerCondition: noScraper.length,
    scrapeEveryMs: scrapeMs,
    scrapes: scrapes.length,
    scrapeBytes,
    scrapeP50Ms: percentile(scrapes, 50),
    scrapeP99Ms: percentile(scrapes, 99),
    smallAckNoScraper: { p50Ms: percentile(noScraper, 50), p99Ms: percentile(noScraper, 99) },
    smallAckWithScraper: { p50Ms: percentile(withScraper, 50), p99Ms: percentile(withScraper, 99) },
    ratios: { p99WithVsWithout: percentile(withScraper, 99) / percentile(noScraper, 99), p50WithVsWithout: percentile(withScraper, 50) / percentile(noScraper, 50) },
  };
  recordResult('metrics', { ...figures, rounds, gapMs });
  if (args.json) {
    process.stdout.write(`${JSON.stringify(figures)}\n`);
    return;
  }
  const f = (x: number, d = 3): string => x.toFixed(d);
  process.stdout.write(
    [
      `small acks per condition: ${figures.acksPerCondition} (${rounds} rounds, ${gapMs} ms apart); scrapes: ${figures.scrapes} every ${scrapeMs} ms, ${figures.scrapeBytes} bytes, p50 ${f(figures.scrapeP50Ms)} ms, p99 ${f(figures.scrapeP99Ms)} ms`,
      `small ack without scraper: p50 ${f(figures.smallAckNoScraper.p50Ms)} ms, p99 ${f(figures.smallAckNoScraper.p99Ms)} ms`,
      `small ack with scraper:    p50 ${f(figures.smallAckWithScraper.p50Ms)} ms, p99 ${f(figures.smallAckWithScraper.p99Ms)} ms`,
      `p99 with / without: ${f(figures.ratios.p99WithVsWithout, 2)}   (1.00: no cost)`,
      '',
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
