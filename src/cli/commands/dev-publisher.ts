import fs from 'node:fs';
import { cliCommand } from '../../config/invocation';
import path from 'node:path';
import { isLoopbackHost } from '../../http/loopback';
import { redactor } from '../../log';
import { writeFileExclusive } from '../../files/exclusive-write';
import { headlessSecretStore, secretsFileFor } from '../../ops/secrets';
import {
  dateOf,
  dayOf,
  encode,
  generateChains,
  planDeliveries,
  Prng,
  referenceFor,
  runDeliveries,
  todayInZone,
} from '../../dev/publisher';
import { EXIT, UsageError, type Command, type CommandContext } from '../command';

function isLoopbackUrl(url: string): boolean {
  return isLoopbackHost(new URL(url).hostname);
}

function integerOption(ctx: CommandContext, name: string, fallback: number, min = 0): number {
  const raw = ctx.values[name];
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < min) throw new UsageError(`--${name} takes a whole number >= ${min}`);
  return Number(raw);
}

function probabilityOption(ctx: CommandContext, name: string): number {
  const raw = ctx.values[name];
  if (raw === undefined) return 0;
  const p = Number(raw);
  if (typeof raw !== 'string' || !Number.isFinite(p) || p < 0 || p > 1) throw new UsageError(`--${name} takes a probability between 0 and 1`);
  return p;
}

/**
 * `pos-sync-agent dev publisher`: plays head office against a running agent (this one or another
 * machine's) with generated menu cycle updates. Needs no agent configuration: to an agent on this PC it
 * sends the webhook token that agent made (from its data folder, the default one or --config's), to
 * another the one in --token-file.
 */
export const devPublisher: Command = {
  name: 'dev publisher',
  summary: 'simulate head office: publish generated menu cycle chains to a webhook URL (with retries and fault knobs)',
  usage:
    '--url U [--locations N] [--updates K] [--items I] [--origin H] [--token-file F] [--ca FILE] [--reorder] [--duplicate] [--drop P] [--seed S] [--dropped-dir DIR] [--expect-out FILE]',
  options: {
    url: { type: 'string' },
    locations: { type: 'string' },
    updates: { type: 'string' },
    items: { type: 'string' },
    origin: { type: 'string' },
    'token-file': { type: 'string' },
    ca: { type: 'string' },
    reorder: { type: 'boolean' },
    duplicate: { type: 'boolean' },
    drop: { type: 'string' },
    seed: { type: 'string' },
    concurrency: { type: 'string' },
    'start-date': { type: 'string' },
    days: { type: 'string' },
    'dropped-dir': { type: 'string' },
    'expect-out': { type: 'string' },
    'give-up-after': { type: 'string' },
  },
  optionHelp: {
    url: 'the webhook URL to publish to (required), e.g. http://127.0.0.1:8787/webhooks/menu-cycles',
    locations: 'how many locations (LocationIDs) to publish for; default 3',
    updates: 'how many chained updates per location; default 10',
    items: 'menu items per location; default 50',
    'start-date': 'first day of the generated price and meal-period ranges, YYYY-MM-DD; default a week ago (UTC)',
    days: 'how many days the ranges cover from the start date; default 90',
    origin: 'the Origin header to send (as head office\'s sender would); default none',
    'token-file': 'a file holding the bearer token to send; default none',
    ca: 'a PEM file with the CA to trust for an https URL; default the system\'s',
    reorder: 'deliver updates out of order (within 4 of each other), as retries do; default in order',
    duplicate: 'send about 20 % of the updates twice; default off',
    drop: 'the share of updates never delivered, 0 to 1 (gaps to see); default 0',
    'dropped-dir': 'write the dropped updates here as files, for `import` later',
    seed: 'the random seed, to repeat a run exactly; default from the clock (printed)',
    concurrency: 'deliveries in flight at once; default twice the locations, at most 8',
    'give-up-after': 'seconds to keep retrying a delivery before giving up; default 600',
    'expect-out': 'write what the till should show once everything is applied (JSON), to compare',
  },
  async run(ctx) {
    const url = ctx.values.url;
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw new UsageError('--url takes the webhook URL, e.g. http://127.0.0.1:8787/webhooks/menu-cycles');
    const seed = integerOption(ctx, 'seed', Date.now() % 1_000_000);
    const locations = integerOption(ctx, 'locations', 3, 1);
    const updates = integerOption(ctx, 'updates', 10, 1);
    const items = integerOption(ctx, 'items', 50, 1);
    const days = integerOption(ctx, 'days', 90, 1);
    const startDate = typeof ctx.values['start-date'] === 'string' ? (ctx.values['start-date'] as string) : dateOf(dayOf(todayInZone('UTC')) - 7);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(startDate)) throw new UsageError('--start-date takes YYYY-MM-DD');
    let token: string | null = null;
    const tokenFile = ctx.values['token-file'];
    if (typeof tokenFile === 'string') {
      token = fs.readFileSync(tokenFile, 'utf8').trim();
    } else if (isLoopbackUrl(url)) {
      // An agent on this PC: the webhook token it made at first start (the default data folder, or --config's).
      token = headlessSecretStore(secretsFileFor({ file: typeof ctx.values.config === 'string' ? ctx.values.config : null })).get('webhook.bearerToken');
    }
    if (token !== null) redactor.add(token);
    const ca = typeof ctx.values.ca === 'string' ? fs.readFileSync(ctx.values.ca) : null;
    const origin = typeof ctx.values.origin === 'string' ? ctx.values.origin : null;

    const chains = generateChains({
      seed,
      locations,
      updatesPerLocation: updates,
      itemsPerLocation: items,
      tariffs: 3,
      mealPeriods: 3,
      rangesPerKey: 3,
      startDate,
      days,
      currencies: ['GBP', 'EUR', 'JPY', 'KWD'],
    });
    const plan = planDeliveries(
      chains,
      {
        reorderWindow: ctx.values.reorder ? 4 : 1,
        duplicate: ctx.values.duplicate ? 0.2 : 0,
        drop: probabilityOption(ctx, 'drop'),
        delayMs: [0, 20],
      },
      new Prng(seed).fork(99),
    );
    const giveUpSeconds = integerOption(ctx, 'give-up-after', 600, 1);
    if (!ctx.json) ctx.out(`Publishing ${plan.deliveries.length} deliveries for ${locations} locations to ${url} (seed ${seed})...`);
    const report = await runDeliveries({ url, origin, token, ca, timeoutMs: 120_000 }, plan, {
      concurrency: integerOption(ctx, 'concurrency', Math.min(8, locations * 2), 1),
      retry: { baseDelayMs: 500, maxDelayMs: 30_000, factor: 2, deadlineMs: giveUpSeconds * 1000 },
      seed,
    });

    const droppedDir = ctx.values['dropped-dir'];
    const droppedFiles: string[] = [];
    if (typeof droppedDir === 'string' && plan.dropped.length > 0) {
      fs.mkdirSync(droppedDir, { recursive: true });
      for (const u of plan.dropped) {
        const file = path.join(droppedDir, `location-${u.locationId}-change-${u.changeSequence}.json`);
        writeFileExclusive(file, encode(u));
        droppedFiles.push(file);
      }
    }
    const expectOut = ctx.values['expect-out'];
    if (typeof expectOut === 'string') {
      // What the POS views should hold once every update (dropped ones included) is applied.
      const state = referenceFor(chains).state();
      writeFileExclusive(
        expectOut,
        JSON.stringify({ seed, lastChangeSequence: Object.fromEntries(state.lastChangeSequence), priceDays: state.prices.size, availabilityDays: state.availability.size }, null, 2),
      );
    }
    const summary = {
      seed,
      deliveries: plan.deliveries.length,
      acked: report.acked.length,
      failed: report.failed.map((f) => ({ locationId: f.delivery.update.locationId, changeSequence: f.delivery.update.changeSequence, lastError: f.outcome.lastError })),
      dropped: plan.dropped.map((u) => ({ locationId: u.locationId, changeSequence: u.changeSequence })),
      droppedFiles,
      statusCounts: report.statusCounts,
      durationMs: Math.round(report.durationMs),
      lastChangeSequence: Object.fromEntries(chains.map((c) => [c.locationId, c.updates[c.updates.length - 1]!.changeSequence])),
    };
    if (ctx.json) ctx.printJson(summary);
    else {
      ctx.out(`Acknowledged ${summary.acked}/${summary.deliveries} in ${(summary.durationMs / 1000).toFixed(1)} s; attempts by status: ${JSON.stringify(summary.statusCounts)}`);
      for (const f of summary.failed) ctx.out(`  gave up on location ${f.locationId} change ${f.changeSequence}: ${f.lastError}`);
      if (plan.dropped.length > 0) {
        ctx.out(`Dropped ${plan.dropped.length} (never sent): ${summary.dropped.map((d) => `${d.locationId}/${d.changeSequence}`).join(', ')}`);
        if (droppedFiles.length > 0) ctx.out(`  written to ${droppedDir}; deliver them by hand with: ${cliCommand('import FILE')}`);
      }
      ctx.out(`Chains end at: ${Object.entries(summary.lastChangeSequence).map(([l, s]) => `${l}=${s}`).join(', ')}`);
    }
    return report.failed.length === 0 ? EXIT.ok : EXIT.failed;
  },
};
