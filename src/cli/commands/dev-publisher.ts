import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import type { z } from 'zod';
import { cliCommand } from '../../config/invocation';
import path from 'node:path';
import { operatorName } from '../../core';
import { AppError } from '../../errors';
import { isLoopbackHost } from '../../http/loopback';
import { redactor } from '../../log';
import { writeFileExclusive } from '../../files/exclusive-write';
import { controlEndpoint, WebhookListenerReply } from '../../ops/control-protocol';
import { dataDirFor, headlessSecretStore, secretsFileFor } from '../../ops/secrets';
import { ControlClient, reachAgent } from '../control-client';
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

/** How long the agent has to answer on its control channel, and a connection to open, before an attempt fails. */
const CHECK_TIMEOUT_MS = 10_000;

/** How long the first check waits for an agent that holds the folder to open its control channel (it is starting). */
const WAIT_FOR_STARTING_AGENT_MS = 15_000;

type Listener = z.infer<typeof WebhookListenerReply>;

function portOf(url: URL): number {
  return url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
}

/**
 * Whether a request to `target` reaches the socket the agent listens on at `listening` (its receiver's
 * URL): the same scheme, port and loopback address. Not a host name (`localhost` too), which may
 * resolve to another loopback address, nor a listener on every address (0.0.0.0, ::): on another
 * address, or beside such a listener on some systems, another account may listen on the same port.
 */
export function reachesListener(target: URL, listening: URL): boolean {
  return target.protocol === listening.protocol && portOf(target) === portOf(listening) && target.hostname === listening.hostname && isLoopbackHost(listening.hostname) && listening.hostname !== 'localhost';
}

/**
 * The webhook token read from a data folder goes to the agent running on that folder, never to
 * whatever else listens on the URL's port: with that agent stopped, or listening elsewhere, another
 * account on the PC may have taken the port, and with the token it could change prices. Where the
 * agent listens is asked over its control channel, which only the folder's owner can open
 * (ops/control-protocol.ts).
 */
class TokenOwner {
  private readonly endpoint: string;

  constructor(
    readonly dataDir: string,
    readonly url: string,
    private readonly actor: string,
  ) {
    this.endpoint = controlEndpoint(dataDir);
  }

  /** The one-line refusal: `fact` about the agent, `todo` the way to send to it, if there is one. */
  refusal(fact: string, todo: string | null): AppError {
    return new AppError(
      'token_not_for_url',
      409,
      `the webhook token read from ${this.dataDir} is sent only to the agent running on that data folder, and ${fact}: ${todo === null ? 'pass' : `${todo}, or pass`} --token-file FILE to send a token of your choice to ${this.url}`,
    );
  }

  /** The reply, if its listener is the URL's; the refusal otherwise. */
  private check(reply: Listener): Listener {
    if (reply.url === null) throw this.refusal(`that agent (pid ${reply.pid}) is not listening for webhook calls now`, 'try again once it is');
    const listening = new URL(reply.url);
    if (!reachesListener(new URL(this.url), listening)) {
      // A listener on every address (or another machine's) has no loopback URL that is only the agent's.
      const own = reachesListener(listening, listening);
      throw this.refusal(`that agent (pid ${reply.pid}) listens at ${reply.url}${own ? '' : ', not at one loopback address'}`, own ? `publish to ${reply.url}` : null);
    }
    return reply;
  }

  private async ask(client: ControlClient, pid: number | null): Promise<Listener> {
    try {
      return await client.request(WebhookListenerReply, { method: 'GET', route: '/webhook-listener' });
    } catch (err) {
      const why = err instanceof AppError ? err.message : ((err as NodeJS.ErrnoException).code ?? String(err));
      throw pid === null
        ? this.refusal(`no agent answers on its control channel (${why})`, 'start it')
        : this.refusal(`that agent (pid ${pid}) does not say where it listens (${why})`, 'run the agent of this version');
    }
  }

  /** Before the deliveries: the agent's listener (waiting for one that is starting, as other commands do). */
  async first(): Promise<Listener> {
    const agent = await reachAgent(this.dataDir, this.actor, WAIT_FOR_STARTING_AGENT_MS);
    if (agent === null) throw this.refusal('no agent runs on it', 'start it');
    return this.check(await this.ask(agent.client, agent.pid));
  }

  /** The agent's listener now (for each connection). */
  async now(): Promise<Listener> {
    return this.check(await this.ask(new ControlClient(this.endpoint, this.actor, CHECK_TIMEOUT_MS), null));
  }

  /**
   * A connection for requests that carry the token, handed over only once the agent is known to
   * have held the URL's port while it opened: asked before it opens and again once it has (TLS
   * included), the same agent (pid) answers with the same listener, the URL's. An agent listens
   * before its control channel opens and closes that channel before it stops listening, so the
   * second answer means it still listened when the connection was accepted, and the first that it
   * already did.
   *
   * What this leaves open: the agent's webhook thread ending unexpectedly, which the agent starts
   * again on the same port. Until that thread listens again the agent still answers with that
   * listener, so a connection another program accepted on the port meanwhile passes both questions.
   */
  async connection(connect: () => net.Socket, connected: 'connect' | 'secureConnect'): Promise<net.Socket> {
    const before = await this.now();
    const socket = connect();
    let failure: Error | null = null;
    // Kept after the hand-over (harmless beside http's own): an error before http listens is not unhandled.
    socket.on('error', (err: Error) => {
      failure ??= err;
    });
    const timer = setTimeout(() => socket.destroy(new Error('timed out')), CHECK_TIMEOUT_MS);
    try {
      await new Promise<void>((resolve, reject) => {
        const closed = (): void => reject(failure ?? new Error('connection closed'));
        socket.once('close', closed);
        socket.once(connected, () => {
          socket.off('close', closed);
          resolve();
        });
      });
      const after = await this.now();
      if (after.pid !== before.pid || after.url !== before.url) {
        throw this.refusal(`the agent changed while the connection opened (pid ${before.pid}, then ${after.pid})`, 'try again');
      }
      if (socket.destroyed) throw failure ?? new Error('connection closed');
      return socket;
    } catch (err) {
      socket.destroy();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The connections (kept alive) for `runDeliveries`: each opened by `connection`. */
  connections(secure: boolean): http.Agent {
    return secure ? new CheckedHttpsAgent(this) : new CheckedHttpAgent(this);
  }
}

type OnCreate = (err: Error | null, socket?: Duplex) => void;

function handOver(opening: Promise<net.Socket>, oncreate: OnCreate): undefined {
  opening.then(
    (socket) => oncreate(null, socket),
    (err: Error) => oncreate(err),
  );
  return undefined;
}

/** http.Agent calls `createConnection` for each new connection and waits for `oncreate`. */
class CheckedHttpAgent extends http.Agent {
  constructor(private readonly owner: TokenOwner) {
    super({ keepAlive: true, maxSockets: 64 });
  }

  createConnection(options: net.NetConnectOpts, oncreate: OnCreate): undefined {
    return handOver(this.owner.connection(() => net.createConnection(options), 'connect'), oncreate);
  }
}

class CheckedHttpsAgent extends https.Agent {
  constructor(private readonly owner: TokenOwner) {
    super({ keepAlive: true, maxSockets: 64 });
  }

  createConnection(options: tls.ConnectionOptions, oncreate: OnCreate): undefined {
    return handOver(this.owner.connection(() => tls.connect(options), 'secureConnect'), oncreate);
  }
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
 * machine's) with generated menu cycle updates. Needs no agent configuration: to the agent running on
 * this PC's data folder (the default one or --config's) it sends the webhook token that agent made,
 * read from that folder, and only to that agent's own listener (TokenOwner); to any other URL the one
 * in --token-file.
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
    'token-file': 'a file holding the bearer token to send; default: to the URL the agent running on this PC\'s data folder listens at, that agent\'s token (read from the folder), otherwise none',
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
    let owner: TokenOwner | null = null;
    const tokenFile = ctx.values['token-file'];
    if (typeof tokenFile === 'string') {
      token = fs.readFileSync(tokenFile, 'utf8').trim();
    } else if (isLoopbackUrl(url)) {
      // An agent on this PC: the webhook token it made at first start (the default data folder, or --config's).
      const site = { file: typeof ctx.values.config === 'string' ? ctx.values.config : null };
      token = headlessSecretStore(secretsFileFor(site)).get('webhook.bearerToken');
      if (token !== null) owner = new TokenOwner(dataDirFor(site), url, operatorName());
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
    const concurrency = integerOption(ctx, 'concurrency', Math.min(8, locations * 2), 1);
    // The token read from the data folder: refused here, just before the deliveries, unless the URL is
    // the listener of the agent running on that folder; then each connection is checked as it opens.
    if (owner !== null) await owner.first();
    const connections = owner?.connections(new URL(url).protocol === 'https:');
    if (!ctx.json) ctx.out(`Publishing ${plan.deliveries.length} deliveries for ${locations} locations to ${url} (seed ${seed})...`);
    let report: Awaited<ReturnType<typeof runDeliveries>>;
    try {
      report = await runDeliveries({ url, origin, token, ca, timeoutMs: 120_000, agent: connections }, plan, {
        concurrency,
        retry: { baseDelayMs: 500, maxDelayMs: 30_000, factor: 2, deadlineMs: giveUpSeconds * 1000 },
        seed,
      });
    } finally {
      connections?.destroy();
    }

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
