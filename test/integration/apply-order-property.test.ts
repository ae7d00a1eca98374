import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AgentCore } from '../../src/core';
import { decideApply } from '../../src/domain/sequence';
import { silentLogger } from '../../src/log';
import { item, price, testConfig, update } from '../helpers/fixtures';

/**
 * The applier picks a location's next update with two indexed statements (mark everything not newer
 * than the applied sequence stale, then take the first child of the applied update) instead of
 * reading every pending row for each apply. This checks it against the rule as the domain states it:
 * decideApply over all pending rows in (ChangeSequence, id) order, the first 'apply' wins, every
 * 'stale' on the way is marked. Random links (the chain itself, waits beyond a gap, forks below the
 * applied sequence, updates older than the baseline) are imported in random order through the real
 * store; after each import the inbox's states and the order of applies must equal the rule's.
 */
const LOCATION = 7;
const BASELINE = 100;

interface Link {
  readonly seq: number;
  readonly parent: number;
}

/** The rule: what the inbox holds after each import, and the sequences applied, in order. */
class Model {
  last: number | null = null;
  readonly states = new Map<number, 'pending' | 'applied' | 'stale'>();
  readonly applied: number[] = [];
  private readonly links = new Map<number, Link>();

  receive(link: Link): void {
    this.links.set(link.seq, link);
    this.states.set(link.seq, 'pending');
    for (;;) {
      const pending = [...this.links.values()].filter((l) => this.states.get(l.seq) === 'pending').sort((a, b) => a.seq - b.seq);
      let next: Link | null = null;
      for (const l of pending) {
        const decision = decideApply({ lastApplied: this.last }, { changeSequence: l.seq, parentChangeSequence: l.parent }, 'auto');
        if (decision.kind === 'stale') this.states.set(l.seq, 'stale');
        else if (decision.kind === 'apply') {
          next = l;
          break;
        }
      }
      if (!next) return;
      this.states.set(next.seq, 'applied');
      this.applied.push(next.seq);
      this.last = next.seq;
    }
  }
}

function body(link: Link): Buffer {
  return Buffer.from(JSON.stringify(update(LOCATION, link.seq, link.parent, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', `${(link.seq % 90) + 1}.00`)])])));
}

/** A chain from the baseline with gaps of 1-3, and noise: waits above it, forks and stale ones below. */
const linksArb = fc
  .record({
    steps: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 0, maxLength: 12 }),
    // A webhook's ChangeSequence is always greater than its parent's (the receiver refuses others).
    noise: fc.array(fc.integer({ min: 1, max: 160 }).chain((seq) => fc.integer({ min: 0, max: seq - 1 }).map((parent) => ({ seq, parent }))), { maxLength: 14 }),
  })
  .map(({ steps, noise }) => {
    const chain: Link[] = [];
    let seq = BASELINE;
    for (const step of steps) {
      chain.push({ seq: seq + step, parent: seq });
      seq += step;
    }
    const bySeq = new Map<number, Link>();
    for (const l of [...chain, ...noise]) if (l.seq !== BASELINE && !bySeq.has(l.seq)) bySeq.set(l.seq, l);
    return [...bySeq.values()];
  })
  .chain((links) => fc.shuffledSubarray(links, { minLength: links.length, maxLength: links.length }));

describe('the applier picks the next update as decideApply over every pending row would', () => {
  it('random links imported in random order give the same states and applies as the rule', () => {
    const config = testConfig();
    const core = new AgentCore({ ...config, sync: { ...config.sync, baselineSettleSeconds: 0 } }, silentLogger);
    const seen = { stale: 0, waitingAtEnd: 0, applied: 0 };
    try {
      fc.assert(
        fc.property(linksArb, (links) => {
          core.tillDb.exec('DELETE FROM price_ranges; DELETE FROM availability_ranges; DELETE FROM items; DELETE FROM locations; DELETE FROM applied_updates; DELETE FROM location_utc_offsets;');
          core.agentDb.exec('DELETE FROM update_warnings; DELETE FROM deliveries; DELETE FROM inbox_body_layout; DELETE FROM inbox_bodies; DELETE FROM inbox; DELETE FROM known_locations;');
          const model = new Model();
          const applied: number[] = [];
          for (const link of [{ seq: BASELINE, parent: BASELINE - 1 }, ...links]) {
            model.receive(link);
            const { outcome, applied: now } = core.importPayload(body(link), 'property-test');
            assert.equal(outcome.kind, 'stored');
            applied.push(...now.map((a) => a.changeSequence));
            const states = new Map((core.agentDb.prepare('SELECT change_sequence, state FROM inbox WHERE location_id = ?').all(LOCATION) as { change_sequence: number; state: string }[]).map((r) => [r.change_sequence, r.state]));
            assert.deepEqual(states, model.states, `after importing ${link.seq} (parent ${link.parent})`);
          }
          assert.deepEqual(applied, model.applied);
          for (const state of model.states.values()) {
            if (state === 'stale') seen.stale++;
            if (state === 'pending') seen.waitingAtEnd++;
            if (state === 'applied') seen.applied++;
          }
        }),
        { numRuns: 120 },
      );
    } finally {
      core.close();
    }
    // Each outcome is drawn often, so every branch of the rule is exercised.
    assert.ok(seen.stale > 100 && seen.waitingAtEnd > 100 && seen.applied > 300, JSON.stringify(seen));
  });
});
