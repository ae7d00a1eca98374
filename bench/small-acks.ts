/**
 * Small deliveries, one after another, as the benches' "small ack" probe (`npm run bench`,
 * `npm run bench:metrics`): a one-item update for a location of its own (9000), each on a new
 * connection as a webhook sender makes them, timed from the request's start to the end of the 200.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * One POST of `body` to `url` on a connection of its own (with the webhook's bearer token when one is
 * given): its status and milliseconds to the end of the answer.
 */
export function post(url: string, body: Buffer, token: string | null = null): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    // A connection per delivery, as a webhook sender makes them: Node's default agent keeps sockets
    // alive, and reusing one the agent's server is closing after its keep-alive timeout ends in
    // "socket hang up".
    const headers = { 'content-type': 'application/json', 'content-length': body.length, ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const req = http.request(url, { method: 'POST', agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The small update number `seq` of location 9000's chain (its parent is `seq - 1`). */
export function smallUpdate(seq: number): Buffer {
  return Buffer.from(
    JSON.stringify({
      ChangeSequence: seq,
      ParentChangeSequence: seq - 1,
      LocationID: 9000,
      CurrencyIsoCode: 'GBP',
      ScheduledItems: [
        {
          PLU: '1',
          ItemID: 'small-1',
          ItemName: 'Tea',
          ItemType: 'RECIPE',
          PriceUpdates: [{ TariffName: 'Eat In', TaxCode: 'S', TaxRate: 20, SellPrice: `1.${String(seq % 100).padStart(2, '0')}`, DateFrom: '2026-12-01', DateTo: '2026-12-31' }],
          ScheduleUpdates: [],
        },
      ],
    }),
  );
}

/** Location 9000's chain against one agent: each call sends its next updates and records their ack times. */
export class SmallAcks {
  private seq = 1;

  constructor(
    private readonly url: string,
    private readonly token: string | null = null,
  ) {}

  /** The next small update; its ack time in milliseconds (a status other than 200 throws, naming `when`). */
  async send(when = ''): Promise<number> {
    const r = await post(this.url, smallUpdate(this.seq++), this.token);
    if (r.status !== 200) throw new Error(`small delivery answered ${r.status}${when ? ` ${when}` : ''}`);
    return r.ms;
  }

  /** `count` small updates, `gapMs` apart (0: one after the other), their ack times pushed to `into`. */
  async sendCount(count: number, gapMs: number, into: number[], when = ''): Promise<void> {
    for (let i = 0; i < count; i++) {
      into.push(await this.send(when));
      if (gapMs > 0) await new Promise((res) => setTimeout(res, gapMs));
    }
  }

  /** Small updates `gapMs` apart until `done()`, their ack times pushed to `into` (and when each started, performance.now(), to `startedAt`). */
  async sendUntil(done: () => boolean, gapMs: number, into: number[], when = '', startedAt?: number[]): Promise<void> {
    while (!done()) {
      startedAt?.push(performance.now());
      into.push(await this.send(when));
      await new Promise((res) => setTimeout(res, gapMs));
    }
  }
}
