/**
 * Each figures table of the docs: which bench's latest result it renders and how (bench/figures.ts
 * puts them between their markers). A table shows what a bench measured, its targets beside it, and
 * one line of provenance: the command, the commit, the machine, Node and SQLite.
 */
import type { BenchRecord } from './results';

interface ParseFigures {
  items: number;
  bytes: number;
  rounds: number;
  parseExactMs: { median: number; min: number; max: number };
  jsonParseMs: { median: number; min: number; max: number };
  ratio: number;
}

interface LookupFigures {
  plus: number;
  results: { variant: string; lookups: number; p50Ms: number; p90Ms: number; p99Ms: number }[];
}

const ms = (n: number, digits: number): string => `${n.toFixed(digits)} ms`;
interface RunFigures {
  results: {
    size: string;
    items: number;
    payloadBytes: number;
    rowsWritten: number;
    ackMs: number;
    applyMs: number;
    applySamplesMs: number[];
    peakRssBytes: number;
    ratios: { ackVsParsePlusBodyInsert: number; applyVsRawRowsInsert: number; peakRssVsPayload: number };
    tillLookup?: { reader: string; lookups: number; p50Ms: number; p99Ms: number };
    duringApply?: {
      eventLoopDelay: { p99Ms: number };
      tillLookupDuringApply: { reader: string; lookups: number; p50Ms: number; p99Ms: number };
      ratios: { longestSmallAckVsIdleP99: number };
      /** Absent from results before the bench measured the receipt too. */
      smallAcksDuringReceipt?: { maxMs: number };
      /** Absent from results before the bench sampled the second update's peak. */
      peak?: { beforeEditOverIdleBytes: number; edit: { untilAckOverIdleBytes: number; highestSampleOverIdleBytes: number; anonymousOverIdleBytes: number; fileOverIdleBytes: number; highestSampleAfterAck: boolean; applierThreadAtHighest: boolean } };
    };
  }[];
}

/** A row against a target: the measured value and whether it meets the target. */
const vs = (what: string, value: number, shown: string, target: string, met: (v: number) => boolean): string => `| ${what} | ${shown} | ${target} (${met(value) ? 'met' : 'not met'}) |`;


/** The npm script of each bench (every `run-…` record is `npm run bench` with its sizes). */
const SCRIPTS: Record<string, string> = {
  parse: 'npm run bench:parse',
  lookup: 'npm run bench:lookup',
  growth: 'npm run bench:growth',
  metrics: 'npm run bench:metrics',
  load: 'npm run bench:load',
  staff: 'npm run bench:staff',
  memory: 'npm run bench:memory',
  profile: 'npm run bench:profile',
  changes: 'npx tsx bench/changes.ts',
  soak: 'npm run soak',
};

/** The command that made a record, as typed. */
export function commandOf(r: BenchRecord): string {
  const script = SCRIPTS[r.bench] ?? (r.bench.startsWith('run-') ? 'npm run bench' : r.bench);
  const args = r.args ?? (r.bench === 'run-L' ? ['--sizes', 'L'] : []);
  return args.length > 0 ? `${script} -- ${args.join(' ')}` : script;
}

/** One line under each table: where and when its figures were measured. */
export function provenance(r: BenchRecord): string {
  const gib = (r.machine.memoryBytes / 2 ** 30).toFixed(0);
  return (
    `Measured ${r.date.slice(0, 10)} by \`${commandOf(r)}\` at ` +
    `${r.commit.slice(0, 7)}${r.dirty ? ' (with uncommitted changes)' : ''}: ${r.machine.cpus} × ${r.machine.cpuModel}, ${gib} GiB, ` +
    `Node ${r.node}, SQLite ${r.sqlite.betterSqlite3} (better-sqlite3)${r.sqlite.nodeSqlite ? `, ${r.sqlite.nodeSqlite} (node:sqlite)` : ''}` +
    `${r.loadAverage ? `; load average ${r.loadAverage.start.toFixed(1)} at the start, ${r.loadAverage.end.toFixed(1)} at the end` : ''}.`
  );
}

export const RUN_L_TABLE = {
  bench: 'run-S-M-L',
  render(r: BenchRecord): string {
    const l = (r.figures as RunFigures).results.find((x) => x.size === 'L');
    if (!l) throw new Error('the run-L result has no L size');
    const rows = [
      `| L publication (${l.items} items, ${(l.payloadBytes / 1e6).toFixed(1)} MB, ${l.rowsWritten} range rows) | measured | target |`,
      '|---|---|---|',
      `| 200 (ack) | ${ms(l.ackMs, 0)} | |`,
      vs('ack / (JSON.parse + raw body insert), same run', l.ratios.ackVsParsePlusBodyInsert, l.ratios.ackVsParsePlusBodyInsert.toFixed(2), '≤ 2', (v) => v <= 2),
      `| 200 -> applied, median of ${l.applySamplesMs.length} | ${ms(l.applyMs, 0)} | |`,
      vs('apply / raw rows insert, same run', l.ratios.applyVsRawRowsInsert, l.ratios.applyVsRawRowsInsert.toFixed(2), '≤ 2', (v) => v <= 2),
      vs('peak RSS / payload, whole run', l.ratios.peakRssVsPayload, l.ratios.peakRssVsPayload.toFixed(2), '< 6', (v) => v < 6),
    ];
    if (l.tillLookup) rows.push(vs(`till lookup p99, idle (${l.tillLookup.reader})`, l.tillLookup.p99Ms, ms(l.tillLookup.p99Ms, 3), '< 1 ms', (v) => v < 1));
    const d = l.duringApply;
    if (d) {
      const window = d.smallAcksDuringReceipt ? "a second L's receipt and apply" : 'a second L apply';
      rows.push(vs(`longest small ack during ${window} / idle p99 small ack`, d.ratios.longestSmallAckVsIdleP99, d.ratios.longestSmallAckVsIdleP99.toFixed(2), '≤ 10', (v) => v <= 10));
      rows.push(vs("receiver's event-loop delay p99 during that apply", d.eventLoopDelay.p99Ms, ms(d.eventLoopDelay.p99Ms, 2), '≤ 20 ms', (v) => v <= 20));
      rows.push(vs(`till lookup p99 during that apply (${d.tillLookupDuringApply.reader})`, d.tillLookupDuringApply.p99Ms, ms(d.tillLookupDuringApply.p99Ms, 3), '< 0.2 ms', (v) => v < 0.2));
      const p = d.peak;
      if (p) {
        const mb = (n: number): string => `${(n / 1e6).toFixed(1)} MB`;
        rows.push(`| agent's peak RSS over idle before the second L was sent (the first publication's, the small deliveries') | ${mb(p.beforeEditOverIdleBytes)} | |`);
        rows.push(`| ... by the second L's 200; highest sampled during its ${p.edit.highestSampleAfterAck ? 'apply' : 'receipt'} (anonymous; files) | ${mb(p.edit.untilAckOverIdleBytes)}; ${mb(p.edit.highestSampleOverIdleBytes)} (${mb(p.edit.anonymousOverIdleBytes)}; ${mb(p.edit.fileOverIdleBytes)}) | |`);
      }
    }
    return [...rows, '', provenance(r)].join('\n');
  },
};

const BASE_TABLES: Readonly<Record<string, { readonly bench: string; render(r: BenchRecord): string }>> = {
  parse: {
    bench: 'parse',
    render(r) {
      const f = r.figures as ParseFigures;
      return [
        `| Parsing the L publication's items (${f.items} items, ${(f.bytes / 1e6).toFixed(1)} MB) | median | range (${f.rounds} rounds) |`,
        '|---|---|---|',
        `| \`parseExact\` (numbers kept as written) | ${ms(f.parseExactMs.median, 0)} | ${f.parseExactMs.min.toFixed(0)}–${ms(f.parseExactMs.max, 0)} |`,
        `| \`JSON.parse\` (baseline) | ${ms(f.jsonParseMs.median, 0)} | ${f.jsonParseMs.min.toFixed(0)}–${ms(f.jsonParseMs.max, 0)} |`,
        `| parseExact / JSON.parse | ${f.ratio.toFixed(2)} | |`,
        '',
        provenance(r),
      ].join('\n');
    },
  },
  'run-l': RUN_L_TABLE,
  lookup: {
    bench: 'lookup',
    render(r) {
      const f = r.figures as LookupFigures;
      return [
        `| Till lookup by location and PLU for today (${f.plus} PLUs of the L menu), through | p50 | p90 | p99 | lookups |`,
        '|---|---|---|---|---|',
        ...f.results.map((x) => `| ${x.variant} | ${ms(x.p50Ms, 3)} | ${ms(x.p90Ms, 3)} | ${ms(x.p99Ms, 3)} | ${x.lookups} |`),
        '',
        provenance(r),
      ].join('\n');
    },
  },
};


const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
const x = (n: number): string => `${n.toFixed(2)}×`;

interface RunSizeFigures {
  size: string;
  items: number;
  payloadBytes: number;
  rowsWritten: number;
  ackMs: number;
  applyMs: number;
  idleRssBytes: number;
  peakRssBytes: number;
  idleThreadHeaps?: Record<string, { totalHeapBytes: number; usedHeapBytes: number } | null>;
  peakParts?: { untilAckOverIdleBytes: number; anonymousOverIdleBytes: number; fileOverIdleBytes: number; highestSampleAfterAck: boolean; applierThreadAtHighest: boolean; applierThreadAtAck?: boolean };
  ratios: { ackVsParsePlusBodyInsert: number; applyVsRawRowsInsert: number; applyVsUnindexedRowsInsert: number; peakRssVsPayload: number; peakOverIdleRssVsPayload: number };
  changes?: { items: number; days: number; changes: number; changesMs: number; perItemQueriesMs: number; ratio: number };
}

/** `npm run bench`: every size's figures against its targets. */
const RUN_SIZES_TABLE = {
  bench: 'run-S-M-L',
  render(r: BenchRecord): string {
    type ServeFigures = {
      command: string;
      rssBytes: number;
      agentThreads: string[];
      fileBackedBytes?: number;
      anonymousBytes?: number;
      awakeRssBytes?: number;
      fileBreakdown?: { nodeCodeBytes: number; nodeDataBytes: number; otherFilesBytes: number };
      nodeOptions?: string[];
      afterApply?: { rssBytes: number; fileBackedBytes: number; anonymousBytes: number; fileBreakdown: { nodeCodeBytes: number; nodeDataBytes: number; otherFilesBytes: number }; items: number; payloadBytes: number };
    };
    const { results: sizes, serveIdle, serveUnoptimised, nodeFloor } = r.figures as {
      results: RunSizeFigures[];
      serveIdle?: ServeFigures;
      serveUnoptimised?: ServeFigures;
      nodeFloor?: { bareRssBytes: number; perEmptyWorkerBytes: number; intlTimeZoneBytes?: number; expressInWorkerBytes?: number; zodInWorkerBytes?: number };
    };
    const row = (what: string, target: string, cell: (s: RunSizeFigures) => string): string => `| ${what} | ${sizes.map(cell).join(' | ')} | ${target} |`;
    const met = (v: number, ok: boolean): string => `${v.toFixed(2)}${ok ? '' : ' (not met)'}`;
    const rows = [
      `| first publication | ${sizes.map((s) => s.size).join(' | ')} | target |`,
      `|---|${sizes.map(() => '---').join('|')}|---|`,
      row('items; payload', '', (s) => `${s.items}; ${mb(s.payloadBytes)}`),
      row('range rows written', '', (s) => String(s.rowsWritten)),
      row('200 (ack)', '', (s) => ms(s.ackMs, 0)),
      row('ack / (JSON.parse + raw body insert)', '≤ 2', (s) => met(s.ratios.ackVsParsePlusBodyInsert, s.ratios.ackVsParsePlusBodyInsert <= 2)),
      row('200 -> applied (median)', '', (s) => ms(s.applyMs, 0)),
      row('apply / raw rows insert (indexed)', '≤ 2', (s) => met(s.ratios.applyVsRawRowsInsert, s.ratios.applyVsRawRowsInsert <= 2)),
      row('apply / the same rows into a table with no index', '≤ 2.5', (s) => met(s.ratios.applyVsUnindexedRowsInsert, s.ratios.applyVsUnindexedRowsInsert <= 2.5)),
      row('idle RSS of the `Agent` alone, applier thread rested', '', (s) => mb(s.idleRssBytes)),
      row('peak RSS of the agent, whole run', '', (s) => mib(s.peakRssBytes)),
      row('peak RSS / payload', '< 6', (s) => met(s.ratios.peakRssVsPayload, s.ratios.peakRssVsPayload < 6)),
      row('(peak RSS - idle RSS) / payload', '≤ 1', (s) => met(s.ratios.peakOverIdleRssVsPayload, s.ratios.peakOverIdleRssVsPayload <= 1)),
    ];
    if (sizes.every((s) => s.peakParts)) {
      rows.push(
        row('first publication: peak RSS by its 200 (the receipt), over idle', '', (s) => mb(s.peakParts!.untilAckOverIdleBytes)),
        ...(sizes.every((s) => s.peakParts!.applierThreadAtAck !== undefined) ? [row('... applier thread already running at the 200', '', (s) => (s.peakParts!.applierThreadAtAck ? 'yes' : 'no'))] : []),
        row('first publication: highest RSS sampled, over idle: anonymous; files', '', (s) => `${mb(s.peakParts!.anonymousOverIdleBytes)}; ${mb(s.peakParts!.fileOverIdleBytes)}`),
        row('... sampled during; applier thread running', '', (s) => `${s.peakParts!.highestSampleAfterAck ? 'the apply' : 'the receipt'}; ${s.peakParts!.applierThreadAtHighest ? 'yes' : 'no'}`),
      );
    }
    const heaps = sizes[0]?.idleThreadHeaps;
    const lines = [...rows];
    if (serveIdle) {
      lines.push('', `Idle RSS of \`${serveIdle.command.replace(' (', '` (')}, once its applier thread has rested (threads ${serveIdle.agentThreads.join(', ')}): ${mb(serveIdle.rssBytes)} (target ≤ 100 MB${serveIdle.rssBytes <= 100e6 ? ', met' : ', not met'})${serveIdle.fileBackedBytes !== undefined && serveIdle.anonymousBytes !== undefined ? `, of which ${mb(serveIdle.fileBackedBytes)} are pages of files and ${mb(serveIdle.anonymousBytes)} anonymous memory` : ''}.${serveIdle.awakeRssBytes !== undefined ? ` Just before its applier thread rested it was ${mb(serveIdle.awakeRssBytes)}: the rest gave back ${mb(serveIdle.awakeRssBytes - serveIdle.rssBytes)}.` : ''}`);
      const files = (f: NonNullable<ServeFigures['fileBreakdown']>): string => `the node binary's code ${mb(f.nodeCodeBytes)}, its read-only data (V8's snapshot, Node's own JavaScript, what of ICU's data is read) ${mb(f.nodeDataBytes)}, other files ${mb(f.otherFilesBytes)}`;
      if (serveIdle.fileBreakdown) lines.push('', `Its pages of files: ${files(serveIdle.fileBreakdown)}.`);
      const after = serveIdle.afterApply;
      if (after) {
        lines.push(
          '',
          `The same \`serve\` once it has applied a first publication (S's: ${after.items} items, ${mb(after.payloadBytes)}, through its webhook, at the default settle deadline) and its applier thread has rested again, as a site's agent idles from its first delivery on: ${mb(after.rssBytes)} (target ≤ 100 MB${after.rssBytes <= 100e6 ? ', met' : ', not met'}), of which ${files(after.fileBreakdown)}, and ${mb(after.anonymousBytes)} anonymous memory.`,
        );
      }
      if (serveUnoptimised?.fileBreakdown && serveIdle.fileBreakdown && serveUnoptimised.anonymousBytes !== undefined) {
        lines.push(
          '',
          `The same \`serve\` started with \`${(serveUnoptimised.nodeOptions ?? []).join(' ')}\` (V8's optimising compilers off; not how a site runs it, for the share of their code only): ${mb(serveUnoptimised.rssBytes)}, of which ${files(serveUnoptimised.fileBreakdown)}, and ${mb(serveUnoptimised.anonymousBytes)} anonymous memory.`,
        );
      }
    }
    if (nodeFloor) {
      // serve's threads while idle (older results named none and ran three).
      const threads = serveIdle?.agentThreads.length || 3;
      const floor = nodeFloor.bareRssBytes + (threads - 1) * nodeFloor.perEmptyWorkerBytes;
      const parts =
        nodeFloor.intlTimeZoneBytes !== undefined && nodeFloor.expressInWorkerBytes !== undefined
          ? ` Parts of the agent's own cost on the same footing: one \`Intl.DateTimeFormat\` with a time zone adds ${mb(nodeFloor.intlTimeZoneBytes)} to that process (ICU's data and code paged in, which the agent's own timezone table spares it), and loading express adds ${mb(nodeFloor.expressInWorkerBytes)} to a worker thread${nodeFloor.zodInWorkerBytes !== undefined ? `, zod ${mb(nodeFloor.zodInWorkerBytes)}` : ''}.`
          : '';
      lines.push('', `The floor, same run: a Node process that loads nothing idles at ${mb(nodeFloor.bareRssBytes)}, and each worker thread that loads nothing adds ${mb(nodeFloor.perEmptyWorkerBytes)}: ${mb(floor)} for ${threads} threads before any of the agent's code.${parts}`);
    }
    if (heaps) {
      const parts = Object.entries(heaps).map(([name, h]) => (h ? `${name} ${mib(h.totalHeapBytes)} (${mib(h.usedHeapBytes)} used)` : `${name} not running`));
      lines.push('', `V8 heap of each thread when idle: ${parts.join(', ')}.`);
    }
    const l = sizes.find((s) => s.changes);
    if (l?.changes) {
      const c = l.changes;
      lines.push('', `What changes next on ${l.size} (${c.items} items, ${c.days} days, ${c.changes} changes): ${ms(c.changesMs, 1)}, against one till query per item ${ms(c.perItemQueriesMs, 1)}: ${x(c.ratio)} (target < 5${c.ratio < 5 ? ', met' : ', not met'}).`);
    }
    return [...lines, '', provenance(r)].join('\n');
  },
};

interface GrowthFigures {
  options: { updates: number; checkpoints: number[]; items: number; locations: number };
  checkpoints: { updates: number; simulatedDate: string; figures: Record<string, number>; baseline: Record<string, number> }[];
  ratiosLastToFirst: Record<string, number>;
  ratiosLastToBaseline: Record<string, number>;
  timeTarget: number;
  runSeconds: number;
}

const GROWTH_TIMES: [key: string, what: string, digits: number][] = [
  ['lookupTodayP50Ms', 'till lookup today, p50', 3],
  ['lookupTodayP99Ms', 'till lookup today, p99', 3],
  ['lookupAheadP50Ms', 'till lookup 6 months ahead, p50', 3],
  ['lookupAheadP99Ms', 'till lookup 6 months ahead, p99', 3],
  ['dailyEditApplyMs', 'daily-edit apply (median)', 1],
  ['republicationApplyMs', 'republication apply (median)', 0],
  ['comingUpMs', 'Coming up (one location, 31 days)', 1],
  ['changesMs', '`changes` (every location, 14 days)', 1],
  ['pruneLongestBatchMs', "the prune's longest batch", 1],
];

/** `npm run bench:growth`: each time figure at the first and the last checkpoint, with its ratios. */
const GROWTH_TABLE = {
  bench: 'growth',
  render(r: BenchRecord): string {
    const f = r.figures as GrowthFigures;
    const first = f.checkpoints[0]!;
    const last = f.checkpoints.at(-1)!;
    const target = f.timeTarget;
    const verdict = (v: number): string => (v <= target ? x(v) : `**${x(v)}** (over)`);
    const rows = [
      `| ${f.options.locations} locations × ${f.options.items} items | ${first.updates} updates | ${last.updates} updates | last / first (target ≤ ${target}×) | last / the first checkpoint's files, measured in turns (target ≤ ${target}×) |`,
      '|---|---:|---:|---:|---:|',
      ...GROWTH_TIMES.map(([k, what, d]) => `| ${what} | ${ms(first.figures[k]!, d)} | ${ms(last.figures[k]!, d)} | ${verdict(f.ratiosLastToFirst[k]!)} | ${verdict(f.ratiosLastToBaseline[k]!)} |`),
      '',
      `| at checkpoint (updates, simulated date) | ${f.checkpoints.map((c) => `${c.updates} (${c.simulatedDate})`).join(' | ')} |`,
      `|---|${f.checkpoints.map(() => '---:').join('|')}|`,
      `| till file, used | ${f.checkpoints.map((c) => mb(c.figures.tillUsedBytes!)).join(' | ')} |`,
      `| agent.db, used | ${f.checkpoints.map((c) => mb(c.figures.agentUsedBytes!)).join(' | ')} |`,
      `| price ranges: all / ending today or later | ${f.checkpoints.map((c) => `${c.figures.priceRanges} / ${c.figures.liveFuturePriceRanges}`).join(' | ')} |`,
      `| applied updates kept | ${f.checkpoints.map((c) => String(c.figures.appliedUpdatesRows)).join(' | ')} |`,
      '',
      `The run took ${f.runSeconds.toFixed(0)} s. ${provenance(r)}`,
    ];
    return rows.join('\n');
  },
};

interface MetricsFigures {
  acksPerCondition: number;
  scrapeEveryMs: number;
  scrapes: number;
  scrapeBytes: number;
  scrapeP50Ms: number;
  scrapeP99Ms: number;
  smallAckNoScraper: { p50Ms: number; p99Ms: number };
  smallAckWithScraper: { p50Ms: number; p99Ms: number };
  ratios: { p99WithVsWithout: number; p50WithVsWithout: number };
}

/** `npm run bench:metrics`: the small ack with and without a scraper. */
const METRICS_TABLE = {
  bench: 'metrics',
  render(r: BenchRecord): string {
    const f = r.figures as MetricsFigures;
    return [
      `| small ack (${f.acksPerCondition} per condition, alternating rounds) | p50 | p99 |`,
      '|---|---:|---:|',
      `| without a scraper | ${ms(f.smallAckNoScraper.p50Ms, 2)} | ${ms(f.smallAckNoScraper.p99Ms, 2)} |`,
      `| with a scraper reading \`/metrics\` every ${f.scrapeEveryMs} ms | ${ms(f.smallAckWithScraper.p50Ms, 2)} | ${ms(f.smallAckWithScraper.p99Ms, 2)} |`,
      `| with / without (1.00: no cost) | ${f.ratios.p50WithVsWithout.toFixed(2)} | ${f.ratios.p99WithVsWithout.toFixed(2)} |`,
      `| one scrape (${f.scrapes} scrapes, ${(f.scrapeBytes / 1000).toFixed(0)} kB each) | ${ms(f.scrapeP50Ms, 1)} | ${ms(f.scrapeP99Ms, 1)} |`,
      '',
      provenance(r),
    ].join('\n');
  },
};

interface LoadFigures {
  locations: number;
  sendingSeconds: number;
  allAppliedAfterSeconds: number;
  deliveriesAcked: number;
  deliveriesPerSecond: number;
  updatesAppliedPerSecond: number;
  ackLatencyMs: { p50: number; p99: number };
  tillQueryMs: { lookups: number; p50: number; p99: number };
  tillQueryDuringLargeApplyMs: { lookups: number; p50: number; p99: number };
  largePublication: { bytes: number; ackMs: number; appliedAfterMs: number };
  peakRssBytes: number;
  maxWalBytes: number;
}

/** `npm run bench:load`: concurrent chains with a large publication half-way (no targets). */
const LOAD_TABLE = {
  bench: 'load',
  render(r: BenchRecord): string {
    const f = r.figures as LoadFigures;
    return [
      `| ${f.locations} locations delivering at once | measured |`,
      '|---|---:|',
      `| deliveries acknowledged | ${f.deliveriesAcked} in ${f.sendingSeconds} s (${f.deliveriesPerSecond} /s) |`,
      `| every acknowledged update applied after | ${f.allAppliedAfterSeconds} s (${f.updatesAppliedPerSecond} /s) |`,
      `| ack, p50 / p99 | ${ms(f.ackLatencyMs.p50, 1)} / ${ms(f.ackLatencyMs.p99, 1)} |`,
      `| till query (prices and meal periods of a PLU), p50 / p99 | ${ms(f.tillQueryMs.p50, 3)} / ${ms(f.tillQueryMs.p99, 3)} |`,
      `| the same during the large apply, p50 / p99 | ${ms(f.tillQueryDuringLargeApplyMs.p50, 3)} / ${ms(f.tillQueryDuringLargeApplyMs.p99, 3)} |`,
      `| large publication (${mb(f.largePublication.bytes)}): 200 / applied after | ${ms(f.largePublication.ackMs, 0)} / ${ms(f.largePublication.appliedAfterMs, 0)} |`,
      `| agent peak RSS; largest WAL | ${mib(f.peakRssBytes)}; ${mib(f.maxWalBytes)} |`,
      '',
      provenance(r),
    ].join('\n');
  },
};

interface StaffFigures {
  employees: number;
  responseBytes: number;
  fullSync: { p50Ms: number };
  rawFetchParse: { p50Ms: number };
  syncOverRaw: number;
  search: { queries: number; p50Ms: number; p99Ms: number };
  pointSelect: { p50Ms: number; p99Ms: number };
  fts5Trigram: { p50Ms: number; p99Ms: number };
}

/** `npm run bench:staff`: the staff sync and search against their baselines. */
const STAFF_TABLE = {
  bench: 'staff',
  render(r: BenchRecord): string {
    const f = r.figures as StaffFigures;
    return [
      `| ${f.employees} employees | p50 | p99 | ratio |`,
      '|---|---:|---:|---:|',
      `| full sync (${mb(f.responseBytes)} of responses) | ${ms(f.fullSync.p50Ms, 0)} | | ${x(f.syncOverRaw)} the baseline |`,
      `| baseline: raw fetch + \`JSON.parse\` of the same responses | ${ms(f.rawFetchParse.p50Ms, 0)} | | |`,
      `| staff search (${f.search.queries} queries) | ${ms(f.search.p50Ms, 2)} | ${ms(f.search.p99Ms, 2)} | ${x(f.search.p50Ms / f.pointSelect.p50Ms)} the point select |`,
      `| baseline: \`SELECT\` by primary key | ${ms(f.pointSelect.p50Ms, 3)} | ${ms(f.pointSelect.p99Ms, 3)} | |`,
      `| comparison: an FTS5 trigram index | ${ms(f.fts5Trigram.p50Ms, 2)} | ${ms(f.fts5Trigram.p99Ms, 2)} | search / FTS5 ${x(f.search.p50Ms / f.fts5Trigram.p50Ms)} |`,
      '',
      provenance(r),
    ].join('\n');
  },
};

/** `npm run bench:memory`: what reading and planning the L publication keep alive in one thread. */
const MEMORY_TABLE = {
  bench: 'memory',
  render(r: BenchRecord): string {
    const f = r.figures as { bodyBytes: number; plannedRanges: number; peakHeapUsedBytes: number; peakRssGrowthBytes: number };
    return [
      `| reading, checking and planning ${mb(f.bodyBytes)} (${f.plannedRanges} planned ranges) | measured | / payload |`,
      '|---|---:|---:|',
      `| peak heap in use while planning | ${mib(f.peakHeapUsedBytes)} | ${x(f.peakHeapUsedBytes / f.bodyBytes)} |`,
      `| peak RSS growth | ${mib(f.peakRssGrowthBytes)} | ${x(f.peakRssGrowthBytes / f.bodyBytes)} |`,
      '',
      provenance(r),
    ].join('\n');
  },
};

interface ProfileFigures {
  payloadBytes: number;
  threads: { busyMs: number; totalMs: number; top: { fn: string; ms: number; share: number }[] }[];
}

/** `npm run bench:profile`: the busiest thread (the applier's) by self time. */
const PROFILE_TABLE = {
  bench: 'profile',
  render(r: BenchRecord): string {
    const f = r.figures as ProfileFigures;
    const busiest = [...f.threads].sort((a, b) => b.busyMs - a.busyMs)[0];
    if (!busiest) throw new Error('the profile result has no thread');
    return [
      `| the busiest thread while ${mb(f.payloadBytes)} is received and applied (${ms(busiest.busyMs, 0)} busy): function, by self time | ms | share |`,
      '|---|---:|---:|',
      ...busiest.top.slice(0, 10).map((t) => `| \`${t.fn.replace(/\|/g, '\\|')}\` | ${t.ms.toFixed(0)} | ${(t.share * 100).toFixed(1)} % |`),
      '',
      provenance(r),
    ].join('\n');
  },
};

interface SoakFigures {
  seed: number;
  kills: number;
  killsDuringDelivery: number;
  killsWithPendingWork: number;
  updates: number;
  deliveriesAcked: number;
  statusCounts: Record<string, number>;
  inboxStates: Record<string, number>;
  wallSeconds: number;
}

/** `npm run soak`: the random-kill crash suite at scale (recorded only when every assertion passed). */
const SOAK_TABLE = {
  bench: 'soak',
  render(r: BenchRecord): string {
    const f = r.figures as SoakFigures;
    const down = Object.entries(f.statusCounts).filter(([status]) => status !== '200').map(([status, n]) => `${n} ${status === 'none' ? 'without an answer' : `answered ${status}`}`);
    const minutes = Math.floor(f.wallSeconds / 60);
    return [
      `| crash suite, seed ${f.seed} | |`,
      '|---|---|',
      `| SIGKILLs | ${f.kills}: ${f.killsDuringDelivery} while deliveries were in flight, ${f.killsWithPendingWork} leaving stored-but-unapplied updates |`,
      `| updates in the chains; deliveries acknowledged (200) | ${f.updates}; ${f.statusCounts['200'] ?? 0} |`,
      `| deliveries that found the agent down | ${down.join(', ') || 'none'} |`,
      `| end state | inbox ${Object.entries(f.inboxStates).map(([state, n]) => `${n} ${state}`).join(', ')}; views equal to the reference model day by day, every 200 in the inbox with its SHA-256, nothing stored twice, integrity ok |`,
      `| wall time | ${minutes} min ${Math.round(f.wallSeconds - minutes * 60)} s |`,
      '',
      provenance(r),
    ].join('\n');
  },
};

export const FIGURE_TABLES: Readonly<Record<string, { readonly bench: string; render(r: BenchRecord): string }>> = {
  ...BASE_TABLES,
  run: RUN_SIZES_TABLE,
  growth: GROWTH_TABLE,
  metrics: METRICS_TABLE,
  load: LOAD_TABLE,
  staff: STAFF_TABLE,
  memory: MEMORY_TABLE,
  profile: PROFILE_TABLE,
  soak: SOAK_TABLE,
};
