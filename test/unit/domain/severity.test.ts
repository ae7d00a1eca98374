import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { assessSeverity, gapsOf, type AgentState, type Light, type SeverityLocation, type SeverityWaiting } from '../../../src/domain/severity';

const now = new Date('2027-01-04T10:00:00Z');
const fmt = (iso: string): string => iso.slice(11, 16);

function loc(extra: Partial<SeverityLocation> = {}): SeverityLocation {
  return { locationId: 3021, locationName: 'Riverside', lastChangeSequence: 1041, lastAppliedAt: '2027-01-04T09:00:00Z', waiting: [], conflicts: 0, warnings: 0, ...extra };
}

function wait(reason: SeverityWaiting['reason'], receivedAt = '2027-01-04T09:55:00Z', changeSequence = 1043, extra: Partial<SeverityWaiting> = {}): SeverityWaiting {
  return { changeSequence, parentChangeSequence: changeSequence - 1, receivedAt, reason, missing: reason === 'waiting' ? 1042 : null, note: null, ...extra };
}

function state(extra: Partial<AgentState> = {}): AgentState {
  return { now, reachable: true, paused: false, locations: [loc()], alerts: [], gapAlertMinutes: 30, baselineSettleSeconds: 60, ...extra };
}

const RANK: Record<Light, number> = { green: 0, amber: 1, red: 2 };
const worst = (lights: Light[]): Light => lights.reduce<Light>((a, b) => (RANK[b] > RANK[a] ? b : a), 'green');

/**
 * The rules written once more as a table, independently of the implementation: each factor of the
 * agent's state and the light it forces on its own. The model's light must be the worst of them.
 */
type Factor = { name: string; light: Light; apply: (s: AgentState) => AgentState };
const addWaiting = (s: AgentState, w: SeverityWaiting): AgentState => ({ ...s, locations: s.locations.map((l, i) => (i === 0 ? { ...l, waiting: [...l.waiting, w] } : l)) });
const FACTORS: readonly Factor[] = [
  { name: 'unreachable', light: 'red', apply: (s) => ({ ...s, reachable: false, unreachableSince: '2027-01-04T09:58:00Z' }) },
  { name: 'storage failing', light: 'red', apply: (s) => ({ ...s, storageError: 'disk I/O error' }) },
  { name: 'right to work expired', light: 'red', apply: (s) => ({ ...s, staff: { expired: 1, expiringSoon: s.staff?.expiringSoon ?? 0, windowDays: 60 } }) },
  { name: 'right to work ending soon', light: 'amber', apply: (s) => ({ ...s, staff: { expired: s.staff?.expired ?? 0, expiringSoon: 2, windowDays: 60 } }) },
  { name: 'old gap', light: 'red', apply: (s) => addWaiting(s, wait('waiting', '2027-01-04T09:00:00Z', 1050)) },
  { name: 'young gap', light: 'amber', apply: (s) => addWaiting(s, wait('waiting', '2027-01-04T09:50:00Z', 1060)) },
  { name: 'fork', light: 'red', apply: (s) => addWaiting(s, wait('fork', '2027-01-04T09:59:00Z', 1070)) },
  { name: 'apply failed', light: 'red', apply: (s) => addWaiting(s, wait('queued', '2027-01-04T09:59:00Z', 1042, { note: 'apply failed: disk I/O error' })) },
  { name: 'queued', light: 'green', apply: (s) => addWaiting(s, wait('queued', '2027-01-04T09:59:00Z', 1042)) },
  { name: 'conflict', light: 'red', apply: (s) => ({ ...s, locations: s.locations.map((l) => ({ ...l, conflicts: 1 })) }) },
  { name: 'warnings', light: 'amber', apply: (s) => ({ ...s, locations: s.locations.map((l) => ({ ...l, warnings: 2 })) }) },
  { name: 'red alert', light: 'red', apply: (s) => ({ ...s, alerts: [...(s.alerts ?? []), { id: 'tunnel', light: 'red', title: 'Tunnel down.', text: '' }] }) },
  { name: 'amber alert', light: 'amber', apply: (s) => ({ ...s, alerts: [...(s.alerts ?? []), { id: 'disk', light: 'amber', title: 'Disk low.', text: '' }] }) },
  { name: 'info alert', light: 'green', apply: (s) => ({ ...s, alerts: [...(s.alerts ?? []), { id: 'clock', light: null, title: 'Clock.', text: '' }] }) },
  { name: 'never received', light: 'amber', apply: (s) => ({ ...s, neverReceived: [{ locationId: 3000, name: null }] }) },
  { name: 'resuming', light: 'green', apply: (s) => ({ ...s, resuming: { interrupted: { locationId: 3021, changeSequence: 1042 }, queued: 1, since: '2027-01-04T09:59:00Z' } }) },
];

/** Paused: red while anything (of this site) is held, amber with nothing held. */
function pausedLight(s: AgentState): Light {
  return s.locations.some((l) => l.siteRole !== 'other' && l.waiting.length > 0) ? 'red' : 'amber';
}

describe('severity model', () => {
  it('is green with nothing to do', () => {
    const s = assessSeverity(state(), fmt);
    assert.equal(s.light, 'green');
    assert.equal(s.label, 'Up to date');
    assert.equal(s.headline, 'The till is up to date.');
    assert.deepEqual(s.reasons, []);
    assert.deepEqual(s.locations[0]!.lines, ['Up to date: update 1041 applied 09:00.']);
    assert.equal(s.actionsEnabled, true);
  });

  it('gives, for every combination of the factors (with and without a pause), the worst of their lights', () => {
    let combinations = 0;
    for (let mask = 0; mask < 1 << FACTORS.length; mask++) {
      for (const paused of [false, true]) {
        let s = state({ paused });
        const expected: Light[] = [];
        FACTORS.forEach((f, i) => {
          if (mask & (1 << i)) {
            s = f.apply(s);
            expected.push(f.light);
          }
        });
        if (paused) expected.push(pausedLight(s));
        const got = assessSeverity(s, fmt);
        const name = FACTORS.filter((_, i) => mask & (1 << i)).map((f) => f.name).join(' + ') + (paused ? ' + paused' : '');
        assert.equal(got.light, worst(expected), name || 'nothing');
        assert.equal(got.actionsEnabled, s.reachable, name);
        // The light always has a reason, and green none that counts.
        if (got.light !== 'green') assert.ok(got.reasons.some((r) => r.light === got.light), name);
        else assert.ok(got.reasons.every((r) => r.light === 'green'), name);
        if (paused || !s.reachable) assert.ok(got.locations.every((c) => c.label !== 'Up to date' && c.light !== 'green'), `${name}: no green card`);
        combinations += 1;
      }
    }
    assert.equal(combinations, 2 ** (FACTORS.length + 1));
  });

  it('says paused is red while updates are held and amber with nothing held, never a green card', () => {
    const idle = assessSeverity(state({ paused: true, pausedBy: 'Maria', pausedAt: '2027-01-04T09:41:00Z' }), fmt);
    assert.equal(idle.light, 'amber');
    assert.equal(idle.label, 'Paused');
    assert.match(idle.headline, /^Applying updates is paused by Maria since 09:41/);
    assert.equal(idle.locations[0]!.label, 'Paused');
    assert.equal(idle.locations[0]!.light, 'amber');
    const held = assessSeverity(state({ paused: true, locations: [loc({ waiting: [wait('queued', '2027-01-04T09:59:00Z', 1042)] })] }), fmt);
    assert.equal(held.light, 'red');
    assert.equal(held.locations[0]!.light, 'red');
    assert.match(held.locations[0]!.lines[0]!, /1 update is held and not on the till/);
  });

  it('puts a location\'s worst line first: paused with nothing held does not hide a red problem', () => {
    const s = assessSeverity(state({ paused: true, locations: [loc({ conflicts: 1, warnings: 1 })] }), fmt);
    const card = s.locations[0]!;
    assert.equal(card.light, 'red');
    assert.equal(card.label, 'Paused');
    assert.match(card.lines[0]!, /arrived again with different content/);
    assert.match(card.lines[1]!, /^Applying is paused: nothing is held yet/);
    assert.match(card.lines[2]!, /warning from applied updates/);
    const reason = s.reasons.find((r) => r.id === `location:${card.locationId}`)!;
    assert.equal(reason.light, 'red');
    assert.match(reason.text, /arrived again with different content/);
    // A red pause (updates held) stays first among the red lines, as it was put there.
    const held = assessSeverity(state({ paused: true, locations: [loc({ conflicts: 1, waiting: [wait('queued', '2027-01-04T09:59:00Z', 1042)] })] }), fmt);
    assert.match(held.locations[0]!.lines[0]!, /1 update is held and not on the till/);
    assert.match(held.locations[0]!.lines[1]!, /arrived again with different content/);
  });

  it('turns red while the agent cannot be reached, says since when, and disables every action', () => {
    const s = assessSeverity(state({ reachable: false, unreachableSince: '2027-01-04T09:58:00Z', unreachableWhy: 'no answer' }), fmt);
    assert.equal(s.light, 'red');
    assert.equal(s.label, 'Agent unreachable');
    assert.match(s.headline, /cannot be reached since 09:58 \(no answer\)/);
    assert.equal(s.actionsEnabled, false);
    assert.equal(s.locations[0]!.label, 'Not known');
    assert.match(s.locations[0]!.lines.join(' '), /Last known: .*update 1041/);
  });

  it('shows a gap once, with the missing update, since when and what resolves it', () => {
    const l = loc({
      waiting: [wait('waiting', '2027-01-04T09:50:00Z', 1043), wait('waiting', '2027-01-04T09:52:00Z', 1044), wait('waiting', '2027-01-04T09:53:00Z', 1045)],
    });
    assert.deepEqual(gapsOf(l), [{ missing: 1042, since: '2027-01-04T09:50:00Z', blocked: 3 }]);
    const s = assessSeverity(state({ locations: [l] }), fmt);
    const gapLines = s.locations[0]!.lines.filter((x) => x.includes('has not arrived'));
    assert.equal(gapLines.length, 1);
    assert.match(gapLines[0]!, /Update 1042 has not arrived from head office \(missing since 09:50\); 3 later updates wait for it/);
    assert.equal(s.light, 'amber');
    const late = assessSeverity(state({ locations: [l], now: new Date('2027-01-04T10:30:00Z') }), fmt);
    assert.equal(late.light, 'red');
    assert.match(late.locations[0]!.lines.join(' '), /ask head office to resend update 1042/);
  });

  it('says at once, in red, that the missing update of a gap arrived and was refused, and what to do; a gap whose update never arrived keeps its wording', () => {
    const waiting = [wait('waiting', '2027-01-04T09:50:00Z', 1043), wait('waiting', '2027-01-04T09:52:00Z', 1044)];
    const refusal = { changeSequence: 1042, receivedAt: '2027-01-04T09:49:00Z', errorId: 'too_deep', message: "arrays and objects nested more than 64 levels deep (the body's own object is the first), at byte 812" };
    const refused = loc({ waiting, refusedMissing: [refusal] });
    // A young gap (a few minutes old): red already, for nothing will come by itself.
    const s = assessSeverity(state({ locations: [refused] }), fmt);
    assert.equal(s.light, 'red');
    assert.equal(s.locations[0]!.label, 'Attention');
    const lines = s.locations[0]!.lines;
    assert.equal(
      lines[0],
      "Update 1042 arrived at 09:49 and was refused (too_deep: arrays and objects nested more than 64 levels deep (the body's own object is the first), at byte 812): " +
        'a resend of the same body would be refused again; 2 later updates wait for it. Ask head office to correct it and send it again, ' +
        'or force-apply update 1043 across the gap (pos-sync-agent force-apply 3021:1043 --reason TEXT).',
    );
    assert.equal(lines.filter((x) => /has not arrived|resends it by itself|resend update 1042/.test(x)).length, 0, lines.join('\n'));
    assert.match(s.headline, /^Riverside \(3021\): Update 1042 arrived at 09:49 and was refused/);
    // Past the alert time it says the same (never "ask head office to resend").
    const late = assessSeverity(state({ locations: [refused], now: new Date('2027-01-04T12:00:00Z') }), fmt);
    assert.deepEqual(late.locations[0]!.lines, lines);
    // A long reason is cut; an unknown one (its quarantine row pruned) is left out.
    const long = assessSeverity(state({ locations: [loc({ waiting, refusedMissing: [{ ...refusal, message: 'x'.repeat(5000) }] })] }), fmt).locations[0]!.lines[0]!;
    assert.ok(long.length < 600 && long.includes('x…)'), long);
    const unknown = assessSeverity(state({ locations: [loc({ waiting, refusedMissing: [{ ...refusal, errorId: null, message: null }] })] }), fmt).locations[0]!.lines[0]!;
    assert.match(unknown, /^Update 1042 arrived at 09:49 and was refused: a resend/);

    // Another gap's update, or none refused: the old wording, amber while young.
    for (const other of [[], [{ ...refusal, changeSequence: 1040 }]]) {
      const young = assessSeverity(state({ locations: [loc({ waiting, refusedMissing: other })] }), fmt);
      assert.equal(young.light, 'amber');
      assert.match(young.locations[0]!.lines[0]!, /^Update 1042 has not arrived from head office \(missing since 09:50\); 2 later updates wait for it\. Head office usually resends it by itself; nothing to do yet\.$/);
      assert.doesNotMatch(young.locations[0]!.lines.join(' '), /refused/);
    }
  });

  it('says a failed apply is retried by the agent itself, and when if that is known, not on a delivery or restart', () => {
    const failed = (extra: Partial<SeverityWaiting>): readonly string[] => assessSeverity(state({ locations: [loc({ waiting: [wait('queued', '2027-01-04T09:59:00Z', 1042, { note: 'apply failed: disk I/O error', ...extra })] })] }), fmt).locations[0]!.lines;
    const [line] = failed({});
    assert.equal(line, 'Applying update 1042 failed (disk I/O error); the agent tries it again by itself, waiting longer after each failure — if it keeps failing, contact support.');
    assert.doesNotMatch(line!, /next delivery|restart/);
    assert.equal(failed({ retryAt: '2027-01-04T10:04:00Z' })[0], 'Applying update 1042 failed (disk I/O error); the agent tries it again by itself, next at 10:04, waiting longer after each failure — if it keeps failing, contact support.');
  });

  it('does not call queued updates a gap: an apply in progress shows its progress', () => {
    const l = loc({ waiting: [wait('queued', '2027-01-04T09:59:00Z', 1042), wait('queued', '2027-01-04T09:59:00Z', 1043)] });
    const s = assessSeverity(state({ locations: [l], applying: { locationId: 3021, changeSequence: 1042, done: 1200, total: 5000 } }), fmt);
    assert.equal(s.light, 'green');
    assert.equal(s.locations[0]!.label, 'Applying');
    assert.match(s.locations[0]!.lines[0]!, /^Applying update 1042: 1,200 of 5,000 items; 1 more update is queued behind it\.$/);
    assert.ok(!s.locations[0]!.lines.some((x) => /contact support|waiting for/.test(x)));
  });

  it('lists updates not applied because a later baseline was adopted, without changing the light', () => {
    const l = loc({ notApplied: [{ changeSequence: 1040, receivedAt: '2027-01-04T09:10:00Z', why: 'it arrived after update 1041 had been adopted' }], notAppliedCount: 1 });
    const s = assessSeverity(state({ locations: [l] }), fmt);
    assert.equal(s.light, 'green');
    assert.match(s.locations[0]!.lines.join('\n'), /Not applied, by design: update 1040 \(received 09:10\): it arrived after update 1041 had been adopted\./);
  });

  it('shows another location as not for this site, amber, without counting it as the till', () => {
    const other = loc({ locationId: 3000, locationName: null, lastChangeSequence: null, lastAppliedAt: null, siteRole: 'other', waiting: [wait('not-for-site')] });
    const s = assessSeverity(state({ locations: [loc({ siteRole: 'configured' }), other] }), fmt);
    assert.equal(s.light, 'amber');
    const card = s.locations.find((c) => c.locationId === 3000)!;
    assert.equal(card.label, 'Not for this site');
    assert.match(card.lines[0]!, /stored but not applied to the till \(1 update stored\)/);
    assert.ok(s.reasons.some((r) => r.id === 'other-locations'));
  });

  it('names an expired right to work in red and one ending soon in amber', () => {
    assert.match(assessSeverity(state({ staff: { expired: 1, expiringSoon: 3, windowDays: 60 } }), fmt).headline, /1 employee's right to work has expired or ends today/);
    const soon = assessSeverity(state({ staff: { expired: 0, expiringSoon: 2, windowDays: 60 } }), fmt);
    assert.equal(soon.light, 'amber');
    assert.match(soon.headline, /2 employees' right to work ends within 60 days/);
  });

  it('says so when nothing was received, and a new location settling in its own words', () => {
    const none = assessSeverity(state({ locations: [] }), fmt);
    assert.equal(none.light, 'amber');
    assert.equal(none.headline, 'No updates received yet from head office.');
    const settling = assessSeverity(state({ locations: [loc({ lastChangeSequence: null, lastAppliedAt: null, waiting: [wait('settling')] })] }), fmt);
    assert.equal(settling.light, 'amber');
    assert.equal(settling.headline, "New location: waiting up to 60 s for head office's first publication.");
  });

  it('keeps its invariants over any state (property)', () => {
    const iso = fc.integer({ min: Date.parse('0001-01-01T00:00:00Z'), max: Date.parse('9999-12-31T23:59:59Z') }).map((t) => new Date(t).toISOString());
    const waiting = fc.record({
      changeSequence: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      parentChangeSequence: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      receivedAt: iso,
      reason: fc.constantFrom('queued', 'waiting', 'fork', 'needs-adoption', 'settling', 'not-for-site'),
      missing: fc.option(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
      note: fc.option(fc.constantFrom('apply failed: x', 'other note')),
    }) as fc.Arbitrary<SeverityWaiting>;
    const location = fc.record({
      locationId: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      locationName: fc.option(fc.string()),
      lastChangeSequence: fc.option(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
      lastAppliedAt: fc.option(iso),
      waiting: fc.array(waiting, { maxLength: 5 }),
      conflicts: fc.nat(3),
      warnings: fc.nat(3),
      siteRole: fc.constantFrom('configured', 'other', 'open'),
    }) as fc.Arbitrary<SeverityLocation>;
    fc.assert(
      fc.property(fc.array(location, { maxLength: 4 }), fc.boolean(), fc.boolean(), fc.option(fc.record({ expired: fc.nat(3), expiringSoon: fc.nat(3), windowDays: fc.nat(90) })), iso, (locations, reachable, paused, staff, at) => {
        const s = assessSeverity(state({ locations, reachable, paused, staff, now: new Date(at) }), fmt);
        assert.equal(s.locations.length, locations.length);
        assert.equal(s.actionsEnabled, reachable);
        if (!reachable) assert.equal(s.light, 'red');
        for (const c of s.locations) {
          assert.ok(RANK[c.light] <= RANK[s.light] || locations.find((l) => l.locationId === c.locationId)?.siteRole === 'other' || s.light === 'amber');
          if (paused || !reachable) assert.notEqual(c.label, 'Up to date');
          assert.ok(c.lines.length > 0);
        }
        if (s.light === 'green') assert.ok(s.locations.every((c) => c.light === 'green'));
      }),
    );
  });
});

describe('severity wording of warnings', () => {
  it('does not claim items were skipped: a warning can be an overlap where nothing was skipped', () => {
    const s = assessSeverity(state({ locations: [loc({ warnings: 1 })] }), fmt);
    assert.equal(s.locations[0]!.lines[0], 'One warning from applied updates: read them below and mark them as seen.');
    assert.doesNotMatch(s.locations[0]!.lines.join(' '), /skipped/);
  });
});

describe('a restart resuming (issue 27)', () => {
  const note = { interrupted: { locationId: 3021, changeSequence: 1042 }, queued: 2, since: '2027-01-04T09:59:00Z' };
  const resumed = (extra: Partial<AgentState> = {}): AgentState =>
    state({ resuming: note, locations: [loc({ waiting: [wait('queued', '2027-01-04T09:50:00Z', 1042), wait('queued', '2027-01-04T09:51:00Z', 1043), wait('queued', '2027-01-04T09:52:00Z', 1044)] })], ...extra });

  it('is news, not a problem: green, the headline, and a line on the location it concerns', () => {
    const s = assessSeverity(resumed(), fmt);
    assert.equal(s.light, 'green');
    assert.equal(s.headline, 'Resuming: applying update 3021:1042 again (the agent stopped during it), then 2 queued updates.');
    assert.deepEqual(s.reasons.map((r) => [r.id, r.light]), [['resuming', 'green']]);
    assert.equal(s.locations[0]!.lines[0], 'Resuming: applying update 3021:1042 again (the agent stopped during it).');
    assert.equal(s.locations[0]!.label, 'Applying');
  });

  it('paused: resumes when applying resumes; a problem stays the headline and the resume is listed', () => {
    const paused = assessSeverity(resumed({ paused: true }), fmt);
    assert.equal(paused.light, 'red', 'held updates while paused stay red');
    assert.ok(paused.reasons.some((r) => r.id === 'resuming' && r.text === 'Resuming when applying resumes: update 3021:1042 is applied again (the agent stopped during it), then 2 queued updates.'));
    assert.doesNotMatch(paused.headline, /Resuming/);
  });

  it('status without an agent says the apply was cut short; a window that lost the agent does not guess', () => {
    const stopped = assessSeverity(resumed({ reachable: false, locationsCurrent: true, resuming: { ...note, queued: 0 } }), fmt);
    assert.ok(stopped.reasons.some((r) => r.text === 'Interrupted: the agent stopped while applying update 3021:1042; it applies it again, from the start, when it starts.'));
    const window = assessSeverity(resumed({ reachable: false }), fmt);
    assert.equal(window.reasons.some((r) => r.id === 'resuming'), false);
  });

  it('only queued updates: said once, no location line', () => {
    const s = assessSeverity(resumed({ resuming: { interrupted: null, queued: 3, since: note.since } }), fmt);
    assert.equal(s.headline, 'Resuming: applying 3 updates queued when the agent stopped.');
    assert.equal(s.locations[0]!.lines.some((l) => l.startsWith('Resuming')), false);
  });
});

describe('"up to date" only when nothing sent waits to be applied', () => {
  const never = (waiting: SeverityWaiting[]): SeverityLocation => loc({ locationId: 3000, locationName: null, lastChangeSequence: null, lastAppliedAt: null, waiting });
  const stopped: Partial<AgentState> = { reachable: false, unreachableWhy: 'no agent is running on /data', locationsCurrent: true };
  // What claims it ("to bring the till up to date" does not).
  const upToDate = (text: string): boolean => /^up to date|\b(is|are) up to date/i.test(text);

  it('never applied + queued, agent stopped (`status` after an interrupted first apply): amber, not on the till yet', () => {
    const s = assessSeverity(
      state({ ...stopped, locations: [never([wait('queued', '2027-01-04T09:50:00Z', 34300)])], resuming: { interrupted: { locationId: 3000, changeSequence: 34300 }, queued: 0, since: '2027-01-04T09:50:00Z' } }),
      fmt,
    );
    const card = s.locations[0]!;
    assert.equal(card.label, 'Not on the till yet');
    assert.equal(card.light, 'amber');
    assert.equal(card.lines[0], 'Nothing is on the till yet: 1 update is queued (next: update 34300); it is applied when the agent runs again.');
    assert.ok(!card.lines.some(upToDate), card.lines.join('\n'));
    assert.equal(s.light, 'red', 'no agent runs');
    assert.ok(s.reasons.some((r) => r.id === 'location:3000' && r.light === 'amber' && /Nothing is on the till yet/.test(r.text)));
  });

  it('never applied + queued, agent running: applying, amber until the first update is on the till', () => {
    const s = assessSeverity(state({ locations: [never([wait('queued', '2027-01-04T09:50:00Z', 34300)])], applying: { locationId: 3000, changeSequence: 34300, done: 5000, total: 20000 } }), fmt);
    const card = s.locations[0]!;
    assert.equal(card.label, 'Applying');
    assert.equal(card.light, 'amber');
    assert.equal(card.lines[0], 'Nothing is on the till yet: update 34300, the first for this location, is being applied.');
    assert.match(card.lines[1]!, /^Applying update 34300: 5,000 of 20,000 items\.$/);
    assert.equal(s.light, 'amber');
    assert.notEqual(s.label, 'Up to date');
    assert.ok(!upToDate(s.headline), s.headline);
  });

  it('never applied + settling: amber, not up to date, running or stopped', () => {
    for (const extra of [{}, stopped]) {
      const s = assessSeverity(state({ ...extra, locations: [never([wait('settling', '2027-01-04T09:59:30Z', 34300)])] }), fmt);
      const card = s.locations[0]!;
      assert.equal(card.light, 'amber');
      assert.notEqual(card.label, 'Up to date');
      assert.ok(!card.lines.some(upToDate), card.lines.join('\n'));
      assert.match(card.lines[0]!, /^Waiting up to 60 s for head office's first publication: update 34300/);
    }
  });

  it('applied + queued: "Applying" (green) while the agent runs, amber "Not on the till yet" while none does', () => {
    const running = assessSeverity(state({ locations: [loc({ waiting: [wait('queued', '2027-01-04T09:59:00Z', 1042)] })] }), fmt);
    assert.equal(running.light, 'green');
    assert.equal(running.label, 'Applying', 'the header does not say "Up to date" while an update is applied');
    assert.equal(running.headline, 'Applying the updates received; nothing to do.');
    assert.equal(running.locations[0]!.label, 'Applying');
    assert.ok(!running.locations[0]!.lines.some(upToDate));
    const off = assessSeverity(state({ ...stopped, locations: [loc({ waiting: [wait('queued', '2027-01-04T09:58:00Z', 1042), wait('queued', '2027-01-04T09:59:00Z', 1043)] })] }), fmt);
    assert.equal(off.locations[0]!.label, 'Not on the till yet');
    assert.equal(off.locations[0]!.light, 'amber');
    assert.equal(off.locations[0]!.lines[0], '2 updates are queued and not on the till yet (next: update 1042); they are applied when the agent runs again.');
  });

  it('never says "up to date" for a location, or the site, while anything sent waits to be applied (property)', () => {
    const iso = fc.integer({ min: Date.parse('2026-01-01T00:00:00Z'), max: Date.parse('2028-01-01T00:00:00Z') }).map((t) => new Date(t).toISOString());
    const waiting = fc.record({
      changeSequence: fc.integer({ min: 1, max: 1_000_000 }),
      parentChangeSequence: fc.integer({ min: 0, max: 1_000_000 }),
      receivedAt: iso,
      reason: fc.constantFrom('queued', 'queued', 'queued', 'settling', 'waiting', 'fork', 'needs-adoption', 'not-for-site'),
      missing: fc.option(fc.integer({ min: 0, max: 1_000_000 })),
      note: fc.constantFrom(null, null, null, 'apply failed: x', 'other note'),
    }) as fc.Arbitrary<SeverityWaiting>;
    const location = fc.record({
      locationId: fc.integer({ min: 1, max: 9999 }),
      locationName: fc.option(fc.string()),
      lastChangeSequence: fc.option(fc.integer({ min: 0, max: 1_000_000 })),
      lastAppliedAt: fc.option(iso),
      waiting: fc.array(waiting, { maxLength: 4 }),
      conflicts: fc.constantFrom(0, 0, 0, 1),
      warnings: fc.constantFrom(0, 0, 0, 1),
      siteRole: fc.constantFrom('configured', 'open'),
    }) as fc.Arbitrary<SeverityLocation>;
    fc.assert(
      fc.property(fc.uniqueArray(location, { selector: (l) => l.locationId, maxLength: 3 }), fc.boolean(), fc.boolean(), fc.boolean(), iso, (locations, reachable, locationsCurrent, paused, at) => {
        const s = assessSeverity(state({ locations, reachable, locationsCurrent, paused, now: new Date(at) }), fmt);
        const pending = (l: SeverityLocation): boolean => l.waiting.some((w) => w.reason !== 'not-for-site');
        s.locations.forEach((card, i) => {
          const l = locations[i]!;
          const saysUpToDate = card.label === 'Up to date' || card.lines.some(upToDate);
          if (pending(l) || l.lastChangeSequence === null) assert.ok(!saysUpToDate, `${card.label}: ${card.lines.join(' | ')}`);
        });
        if (locations.some((l) => pending(l) || l.lastChangeSequence === null)) {
          assert.notEqual(s.label, 'Up to date');
          assert.ok(!upToDate(s.headline), s.headline);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
