/**
 * How much memory reading and planning a large publication keeps alive, in one thread, without the
 * HTTP server or SQLite around it: `npm run bench:memory` (run with --expose-gc so the generator's own
 * garbage is collected before measuring). Prints the heap in use and the peak RSS growth while the L
 * publication (5,000 items, 43 MB) is read, checked and planned item by item, as the inbox and the
 * applier threads do. The RSS growth is sampled (after each step and each planned item) against the
 * RSS once the body is ready: the process's lifetime peak (getrusage's maxRSS) is set by generating
 * the body and would hide it.
 */
import { planBody, readBody } from '../src/domain/body';
import { dateOf, dayOf, encode, generateChains, todayInZone } from '../src/dev/publisher';
import { recordResult } from './results';

const mb = (n: number): string => (n / 2 ** 20).toFixed(0);
function show(what: string): void {
  const m = process.memoryUsage();
  console.log(`${what.padEnd(30)} rss ${mb(m.rss)} MiB, heap used ${mb(m.heapUsed)} MiB, external ${mb(m.external)} MiB`);
}

function body(): Buffer {
  const today = todayInZone('Europe/London');
  const [chain] = generateChains({ seed: 2026, locations: 1, updatesPerLocation: 1, startDate: dateOf(dayOf(today) - 30), days: 365, itemsPerLocation: 5000, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12 });
  return Buffer.from(encode(chain!.updates[0]!));
}

const raw = body();
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (npm run bench:memory does)');
gc();
show(`body ready (${(raw.length / 1e6).toFixed(1)} MB)`);
const rssBefore = process.memoryUsage().rss;
let peakRss = rssBefore;
const read = readBody(raw, { checkItems: true });
if (!read.ok) throw new Error(read.error.message);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
show('read and checked (inbox)');
let ranges = 0;
let peakHeap = 0;
for (const item of planBody(read).items) {
  ranges += item.prices.length + item.availability.length;
  const m = process.memoryUsage();
  peakHeap = Math.max(peakHeap, m.heapUsed);
  peakRss = Math.max(peakRss, m.rss);
}
show('planned (applier)');
gc();
show('after a full collection');
console.log(`planned ranges ${ranges}; peak heap used while planning ${mb(peakHeap)} MiB; peak RSS growth over the ready body ${mb(peakRss - rssBefore)} MiB (sampled)`);
recordResult('memory', { bodyBytes: raw.length, plannedRanges: ranges, peakHeapUsedBytes: peakHeap, peakRssGrowthBytes: peakRss - rssBefore });
