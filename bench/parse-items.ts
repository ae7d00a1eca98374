/**
 * `npm run bench:parse` — reading the L publication's 5,000 items (43 MB) the way the applier reads
 * them: each item's text with `parseExact` (numbers kept as their source text, src/domain/json-scan.ts),
 * against the native `JSON.parse` of the same texts in the same rounds (the baseline: what V8's own
 * parser takes, numbers turned into floats). Rounds alternate the two so the machine's drift falls on
 * both alike; the first round of each is warm-up and left out. `--json` prints one object; `--rounds N`
 * (default 8).
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { dateOf, dayOf, encode, generateChains, todayInZone } from '../src/dev/publisher';
import { parseExact, parseLazily } from '../src/domain/json-scan';
import { recordResult } from './results';
import { median } from './stats';

const { values: args } = parseArgs({ options: { json: { type: 'boolean', default: false }, 'no-record': { type: 'boolean', default: false }, rounds: { type: 'string', default: '8' } } });
const json = args.json;
const ROUNDS = Number(args.rounds);

const today = todayInZone('Europe/London');
// The same L publication as `npm run bench -- --sizes L`.
const [chain] = generateChains({ seed: 2026, locations: 1, updatesPerLocation: 1, startDate: dateOf(dayOf(today) - 30), days: 365, itemsPerLocation: 5000, tariffs: 3, mealPeriods: 3, scheduling: 'all', rangesPerKey: 12 });
const body = Buffer.from(encode(chain!.updates[0]!));
const spans = parseLazily(body, 'ScheduledItems').elements!;
const texts = spans.map((s) => body.toString('utf8', s.start, s.end));

function timed(parse: (text: string) => unknown): number {
  const t0 = performance.now();
  let kept = 0;
  for (const text of texts) if (parse(text) !== null) kept++;
  const ms = performance.now() - t0;
  if (kept !== texts.length) throw new Error(`parsed ${kept} of ${texts.length} items`);
  return ms;
}

const exact: number[] = [];
const native: number[] = [];
for (let round = 0; round <= ROUNDS; round++) {
  const e = timed(parseExact);
  const n = timed(JSON.parse);
  if (round === 0) continue;
  exact.push(e);
  native.push(n);
}
const result = {
  items: texts.length,
  bytes: body.length,
  rounds: ROUNDS,
  parseExactMs: { median: median(exact), min: Math.min(...exact), max: Math.max(...exact) },
  jsonParseMs: { median: median(native), min: Math.min(...native), max: Math.max(...native) },
  ratio: median(exact) / median(native),
};
recordResult('parse', result);
if (json) console.log(JSON.stringify(result));
else {
  console.log(`L items: ${result.items}, ${(result.bytes / 1e6).toFixed(1)} MB, ${ROUNDS} rounds after one warm-up`);
  console.log(`parseExact  median ${result.parseExactMs.median.toFixed(0)} ms (${result.parseExactMs.min.toFixed(0)}-${result.parseExactMs.max.toFixed(0)})`);
  console.log(`JSON.parse  median ${result.jsonParseMs.median.toFixed(0)} ms (${result.jsonParseMs.min.toFixed(0)}-${result.jsonParseMs.max.toFixed(0)})`);
  console.log(`parseExact / JSON.parse: ${result.ratio.toFixed(2)}`);
}
