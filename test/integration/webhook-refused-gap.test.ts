import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestAgent, type RunningTestAgent } from '../helpers/agent';
import { item, price, update } from '../helpers/fixtures';
import { buildStatusReply } from '../../src/admin/status-reply';
import { severityOf } from '../../src/admin/summary';
import { describeLocation } from '../../src/cli/commands/sync';
import { MAX_DEPTH } from '../../src/domain/body';
import { silentLogger } from '../../src/log';

/**
 * The reviewer's case, posted to a real agent over loopback: head office's update 11 (parent 10) for
 * location 5003 is refused (400) after its envelope was read, here for an item nested past MAX_DEPTH,
 * and update 12 (parent 11) then waits behind the gap. The refusal's delivery row names 5003:11, so
 * the status says at once, in red, that 11 arrived and was refused (a resend of the same body is
 * refused again), not that it has not arrived; a corrected 11 then applies with 12 and the line goes.
 */

const LOCATION = 5003;
const tea = (sell: number): unknown[] => [item('7', 'Tea', [price('2026-12-01', '2026-12-31', 'Eat In', sell)])];

async function postRaw(t: RunningTestAgent, raw: Buffer): Promise<{ status: number; error: { id: string; field: string } | undefined }> {
  const res = await fetch(t.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
  const json = (await res.json()) as { error?: { id: string; field: string } };
  return { status: res.status, error: json.error };
}

function severityLines(t: RunningTestAgent): { light: string; lines: readonly string[]; headline: string } {
  const reply = buildStatusReply(t.agent, [], silentLogger);
  const severity = severityOf(reply, new Date(), (iso) => iso.slice(11, 16));
  const location = severity.locations.find((l) => l.locationId === LOCATION)!;
  return { light: location.light, lines: location.lines, headline: severity.headline };
}

describe('a gap whose missing update arrived and was refused', () => {
  it('is said at once to be a refusal, in red, on every surface; a corrected resend applies and the line goes', async () => {
    // Bodies of 64 KiB or more are streamed to a file of their own and checked from it (receiveFile).
    const t = await startTestAgent({ webhook: { fileBodyFromBytes: 64 * 1024 } });
    assert.equal((await t.post(update(LOCATION, 10, 9, tea(1)))).status, 200);
    await t.settle();
    assert.equal(t.agent.core.status().find((l) => l.locationId === LOCATION)!.lastChangeSequence, 10);

    // Update 11: identifiers as strings (normalised as an accepted body's are), and an item whose
    // price model is nested one level past MAX_DEPTH, placed before the ChangeSequence member.
    const good11 = JSON.stringify(update(LOCATION, 11, 10, tea(2)));
    const deepItem = JSON.stringify(tea(2)[0]).replace('"PriceModel":"Standard"', `"PriceModel":${'['.repeat(MAX_DEPTH)}${']'.repeat(MAX_DEPTH)}`);
    assert.notEqual(deepItem, JSON.stringify(tea(2)[0]), 'the item nests its price model');
    const bad11 = Buffer.from(`{"LocationID":"${LOCATION}","ScheduledItems":[${deepItem}],"ChangeSequence":" 11 ","ParentChangeSequence":10,"CurrencyIsoCode":"GBP"}`);
    const refused = await postRaw(t, bad11);
    assert.equal(refused.status, 400);
    assert.equal(refused.error?.id, 'too_deep');

    // The refusal's delivery row names the update its envelope named.
    const row = t.agent.core.agentDb
      .prepare("SELECT location_id, change_sequence, quarantine_id FROM deliveries WHERE outcome = 'rejected' ORDER BY id DESC LIMIT 1")
      .get() as { location_id: number | null; change_sequence: number | null; quarantine_id: number | null };
    assert.deepEqual([row.location_id, row.change_sequence], [LOCATION, 11]);
    assert.notEqual(row.quarantine_id, null);

    assert.equal((await t.post(update(LOCATION, 12, 11, tea(3)))).status, 200);
    await t.settle();

    const status = t.agent.core.status().find((l) => l.locationId === LOCATION)!;
    assert.deepEqual(status.waiting.map((w) => [w.changeSequence, w.reason, w.missing]), [[12, 'waiting', 11]]);
    assert.equal(status.refusedMissing?.length, 1);
    assert.deepEqual([status.refusedMissing![0]!.changeSequence, status.refusedMissing![0]!.errorId], [11, 'too_deep']);
    assert.match(status.refusedMissing![0]!.message ?? '', /nested more than 64 levels deep/);

    // The model (the window, the tray, `status`): red at once, a refusal, never "has not arrived".
    const model = severityLines(t);
    assert.equal(model.light, 'red');
    const line = model.lines.find((x) => x.startsWith('Update 11 '));
    assert.ok(line, model.lines.join('\n'));
    assert.match(line, /^Update 11 arrived at \d\d:\d\d and was refused \(too_deep: arrays and objects nested more than 64 levels deep .*\): a resend of the same body would be refused again; 1 later update waits for it\./);
    assert.match(line, /force-apply update 12 across the gap \(pos-sync-agent force-apply 5003:12 --reason TEXT\)\.$/);
    assert.doesNotMatch(model.lines.join('\n'), /has not arrived|resends it by itself/);
    assert.match(model.headline, /Update 11 arrived at .* and was refused/);
    // `status` prints the model's lines, and its gap detail says the same.
    const printed = describeLocation(status, severityOf(buildStatusReply(t.agent, [], silentLogger), new Date(), (iso) => iso.slice(11, 16)).locations.find((l) => l.locationId === LOCATION)!);
    assert.ok(printed.includes(`  ${line}`), printed.join('\n'));
    assert.ok(printed.some((x) => /gap: update 5003:12 .* needs update 11, which arrived at .* and was refused \(too_deep\)$/.test(x)), printed.join('\n'));

    // A resend of the same body is refused again; the line stays.
    assert.equal((await postRaw(t, bad11)).status, 400);
    assert.ok(severityLines(t).lines.some((x) => x.startsWith('Update 11 arrived at ')));

    // A large 11 (checked from its file) whose item holds bytes that are not UTF-8: the latest refusal.
    const name = Buffer.concat([Buffer.from('x'.repeat(100_000)), Buffer.from([0xc3, 0x28])]);
    const big11 = Buffer.concat([
      Buffer.from(`{"ChangeSequence":11,"ParentChangeSequence":10,"LocationID":${LOCATION},"ScheduledItems":[{"PLU":"7","ItemID":"Tea","ItemName":"`),
      name,
      Buffer.from('","ItemType":"RECIPE","PriceUpdates":[],"ScheduleUpdates":[]}]}'),
    ]);
    const encoding = await postRaw(t, big11);
    assert.deepEqual([encoding.status, encoding.error?.id], [400, 'invalid_encoding']);
    const latest = severityLines(t);
    assert.equal(latest.light, 'red');
    assert.ok(latest.lines.some((x) => /^Update 11 arrived at .* and was refused \(invalid_encoding: not valid UTF-8 \(at byte \d+\)\)/.test(x)), latest.lines.join('\n'));
    assert.doesNotMatch(latest.lines.join('\n'), /x{20}/, 'nothing of the body is quoted');

    // Head office corrects it: 11 applies, then 12, and the line is gone.
    assert.equal((await t.post(good11)).status, 200);
    await t.settle();
    const after = t.agent.core.status().find((l) => l.locationId === LOCATION)!;
    assert.equal(after.lastChangeSequence, 12);
    assert.deepEqual(after.waiting, []);
    assert.deepEqual(after.refusedMissing ?? [], []);
    const green = severityLines(t);
    assert.equal(green.light, 'green');
    assert.doesNotMatch(green.lines.join('\n'), /refused|has not arrived/);
  });
});
