import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Agent, AgentService } from '../../../src/agent';
import type { AdminPanelProvider, PanelView } from '../../../src/admin/extensions';
import { csrfTokenFor } from '../../../src/admin/security';
import { startAdminAgent } from '../../helpers/admin';
import { item, price, sampleBodies, update } from '../../helpers/fixtures';

/** The admin JSON API over real HTTP: what the window reads and the operator actions. */

class TestPanel implements AgentService, AdminPanelProvider {
  readonly name = 'tunnel';
  actions: string[] = [];
  async start(_agent: Agent): Promise<void> {}
  async stop(): Promise<void> {}
  adminPanel(): PanelView {
    return { title: 'Tunnel', items: [{ label: 'Public URL', value: '<b>https://x.example</b>', level: 'ok' }], actions: [{ id: 'restart', label: 'Restart tunnel', confirm: 'Restart?' }] };
  }
  runAdminAction(id: string, actor: string): { message: string } {
    this.actions.push(`${id} by ${actor}`);
    return { message: `done: ${id}` };
  }
}

describe('admin API', async () => {
  const panel = new TestPanel();
  const t = await startAdminAgent({}, { services: [panel] });
  const auth = { authorization: `Bearer ${t.token}` };
  const change = { ...auth, 'x-csrf-token': csrfTokenFor(t.token), 'content-type': 'application/json' };
  const api = async (path: string, init: RequestInit = {}): Promise<{ status: number; body: unknown; headers: Headers }> => {
    const res = await fetch(`${t.adminUrl}${path.replace(/^\//, '')}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string> | undefined) } });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, body, headers: res.headers };
  };
  const [first, second, third] = sampleBodies();

  it('reports the gap a missing update leaves, per location', async () => {
    assert.equal((await t.post(first!.raw)).status, 200);
    assert.equal((await t.post(third!.raw)).status, 200);
    await t.settle();
    const { body } = (await api('/api/status')) as { body: { paused: boolean; locations: { locationId: number; lastChangeSequence: number; waiting: { changeSequence: number; waitingFor: number }[] }[] } };
    assert.equal(body.paused, false);
    const loc = body.locations.find((l) => l.locationId === 3021)!;
    assert.equal(loc.lastChangeSequence, 1041);
    assert.deepEqual(loc.waiting.map((w) => [w.changeSequence, w.waitingFor]), [[1043, 1042]]);
  });

  it('lists deliveries and serves a stored payload as inert text', async () => {
    const { body } = (await api('/api/deliveries?limit=10')) as { body: { deliveries: { inboxId: number; result: string; changeSequence: number }[] } };
    assert.deepEqual(body.deliveries.map((d) => [d.changeSequence, d.result]), [[1043, 'waiting'], [1041, 'applied']]);
    const payload = await api(`/api/payloads/inbox/${body.deliveries[1]!.inboxId}`);
    assert.equal(payload.status, 200);
    assert.match(String(payload.headers.get('content-type')), /^text\/plain/);
    assert.match(String(payload.headers.get('content-security-policy')), /sandbox/);
    assert.equal(payload.body && (payload.body as { ChangeSequence: number }).ChangeSequence, 1041);
    assert.equal((await api('/api/payloads/inbox/999999')).status, 404);
    assert.equal((await api('/api/payloads/secrets/1')).status, 404);
    assert.equal((await api('/api/deliveries?limit=abc')).status, 400);
  });

  it('answers a PLU lookup from the POS views', async () => {
    const { body } = (await api('/api/lookup?plu=3300&date=2026-12-25')) as { body: { date: string; items: { itemName: string; prices: { tariffName: string; sellPrice: string; taxCode: string }[] }[] } };
    assert.equal(body.date, '2026-12-25');
    assert.deepEqual(body.items[0]!.prices.map((p) => [p.tariffName, p.sellPrice, p.taxCode]), [['Eat In', '1.80', 'S'], ['Take Away', '1.50', 'Z']]);
    assert.equal((await api('/api/lookup?plu=')).status, 400);
    assert.equal((await api('/api/lookup?plu=1&date=25/12/2026')).status, 400);
    const noSuchDate = await api('/api/lookup?plu=1&date=2026-02-30');
    assert.equal(noSuchDate.status, 400);
    assert.deepEqual((noSuchDate.body as { error: unknown }).error, { id: 'invalid_date', message: '2026-02-30 is not a date in the calendar' });
    const tooLong = await api(`/api/lookup?plu=${'1'.repeat(101)}`);
    assert.equal(tooLong.status, 400);
    assert.deepEqual((tooLong.body as { error: unknown }).error, { id: 'plu_too_long', message: 'this PLU is 101 characters long; a PLU on the till has at most 100' });
    assert.equal((await api(`/api/lookup?plu=${'1'.repeat(100)}`)).status, 200);
  });

  it('imports a payload through the webhook path (audited) and refuses junk', async () => {
    const ok = await api('/api/import', { method: 'POST', headers: { ...change, 'content-type': 'application/octet-stream' }, body: second!.raw });
    assert.equal(ok.status, 200);
    const out = ok.body as { outcome: { decision: string; body?: unknown }; applied: { changeSequence: number }[] };
    assert.equal(out.outcome.decision, 'new');
    assert.equal(out.outcome.body, undefined, 'the parsed body is not echoed');
    assert.deepEqual(out.applied.map((a) => a.changeSequence), [1042, 1043]);
    const junk = await api('/api/import', { method: 'POST', headers: change, body: '{"not":"an update"}' });
    assert.equal(junk.status, 422);
    const audit = t.agent.core.agentDb.prepare("SELECT actor FROM audit_log WHERE action = 'import'").all() as { actor: string }[];
    assert.equal(audit.length, 2);
    assert.match(audit[0]!.actor, /status window/);
  });

  it('force-apply needs a reason and says why it refuses', async () => {
    await t.post(update(9, 5, 4, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 1)])]));
    await t.post(update(9, 7, 6, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 2)])]));
    await t.settle();
    const waiting = t.agent.core.status().find((l) => l.locationId === 9)!.waiting[0]!;
    assert.equal(waiting.changeSequence, 7);
    const noReason = await api(`/api/updates/9:7/force-apply`, { method: 'POST', headers: change, body: '{}' });
    assert.equal(noReason.status, 400);
    assert.equal((noReason.body as { error: { id: string } }).error.id, 'reason_required');
    const reason = JSON.stringify({ reason: 'support ticket 12' });
    const badName = await api(`/api/updates/9-7/force-apply`, { method: 'POST', headers: change, body: reason });
    assert.equal(badName.status, 400);
    assert.equal((badName.body as { error: { id: string } }).error.id, 'invalid_update_name');
    // The window sends LOCATION:SEQUENCE (URL-encoded); the inbox number still works as #N.
    const ok = await api(`/api/updates/${encodeURIComponent('9:7')}/force-apply`, { method: 'POST', headers: change, body: reason });
    assert.equal(ok.status, 200);
    assert.equal((ok.body as { forced: { inboxId: number } }).forced.inboxId, waiting.inboxId);
    const again = await api(`/api/updates/${encodeURIComponent(`#${waiting.inboxId}`)}/force-apply`, { method: 'POST', headers: change, body: reason });
    assert.equal(again.status, 409);
    assert.equal((again.body as { error: { id: string } }).error.id, 'not_pending');
  });

  it('lists conflicting redeliveries and keeps one with a reason (issue 12, point 14)', async () => {
    await t.post(update(11, 5, 4, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 1)])]));
    await t.post(update(11, 5, 4, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 1.5)])]));
    await t.settle();
    const listed = await api('/api/conflicts');
    const conflict = (listed.body as { conflicts: { name: string; bodies: { inboxId: number; state: string }[]; onlyFirst: string | null }[] }).conflicts.find((c) => c.name === '11:5')!;
    assert.deepEqual(conflict.bodies.map((b) => b.state), ['applied', 'conflict']);
    assert.match(conflict.onlyFirst!, /already on the till/);
    const [first, later] = conflict.bodies;
    const keep = (name: string, body: unknown) => api(`/api/conflicts/${encodeURIComponent(name)}/keep`, { method: 'POST', headers: change, body: JSON.stringify(body) });
    assert.equal(((await keep('11:5', { inboxId: first!.inboxId })).body as { error: { id: string } }).error.id, 'reason_required');
    assert.equal(((await keep('11-5', { inboxId: first!.inboxId, reason: 'fine' })).body as { error: { id: string } }).error.id, 'invalid_update_name');
    const refused = await keep('11:5', { inboxId: later!.inboxId, reason: 'the resend' });
    assert.equal(refused.status, 409);
    assert.equal((refused.body as { error: { id: string } }).error.id, 'conflict_first_applied');
    const ok = await keep('11:5', { inboxId: first!.inboxId, reason: 'the till has the right one' });
    assert.equal(ok.status, 200);
    assert.deepEqual((ok.body as { resolution: unknown }).resolution, { name: '11:5', kept: first!.inboxId, dropped: [later!.inboxId], keptState: 'applied' });
    assert.equal(t.agent.core.status().find((l) => l.locationId === 11)!.conflicts, 0);
    const none = await keep('11:5', { inboxId: first!.inboxId, reason: 'again' });
    assert.equal(none.status, 404);
    assert.equal((none.body as { error: { id: string } }).error.id, 'no_conflict');
  });

  it('pauses and resumes applying', async () => {
    assert.equal((await api('/api/sync/paused', { method: 'PUT', headers: change, body: '{"paused":true}' })).status, 200);
    assert.equal(t.agent.isPaused, true);
    assert.equal((await api('/api/sync/paused', { method: 'PUT', headers: change, body: '{"paused":"yes"}' })).status, 400);
    assert.equal((await api('/api/sync/paused', { method: 'PUT', headers: change, body: '{"paused":false}' })).status, 200);
    assert.equal(t.agent.isPaused, false);
  });

  it('records the reason given for a pause or resume (optional, at most 500 characters)', async () => {
    const put = (body: unknown) => api('/api/sync/paused', { method: 'PUT', headers: change, body: JSON.stringify(body) });
    for (const reason of [42, 'x'.repeat(501)]) {
      const refused = await put({ paused: true, reason });
      assert.equal(refused.status, 400);
      assert.equal((refused.body as { error: { id: string } }).error.id, 'invalid_parameter');
    }
    assert.equal(t.agent.isPaused, false);
    assert.equal((await put({ paused: true, reason: '  stocktake tonight  ' })).status, 200);
    assert.equal((await put({ paused: false, reason: '   ' })).status, 200);
    const rows = t.agent.core.agentDb.prepare("SELECT action, details FROM audit_log WHERE action IN ('pause', 'resume') ORDER BY id DESC LIMIT 2").all() as { action: string; details: string }[];
    assert.deepEqual(rows.map((r) => [r.action, JSON.parse(r.details)]), [['resume', {}], ['pause', { reason: 'stocktake tonight' }]]);
  });

  it('gives the webhook URL for head office and keeps manager settings in their own file', async () => {
    const { body } = (await api('/api/settings')) as { body: { webhookUrl: string; webhookUrlIsPublic: boolean; shell: string; settings: { startAtLogin: boolean } } };
    assert.equal(body.webhookUrl, t.webhookUrl);
    assert.equal(body.webhookUrlIsPublic, false);
    assert.equal(body.shell, 'browser');
    const bad = await api('/api/settings', { method: 'PUT', headers: change, body: '{"dataDir":"/tmp"}' });
    assert.equal(bad.status, 400);
  });

  it('shows panels other services add, and runs their actions with CSRF', async () => {
    const { body } = (await api('/api/panels')) as { body: { panels: { name: string; title: string }[] } };
    assert.deepEqual(body.panels.map((p) => [p.name, p.title]), [['tunnel', 'Tunnel']]);
    assert.equal((await api('/api/panels/tunnel/actions/restart', { method: 'POST', headers: auth })).status, 403);
    const ran = await api('/api/panels/tunnel/actions/restart', { method: 'POST', headers: change, body: '{}' });
    assert.deepEqual(ran.body, { message: 'done: restart' });
    assert.equal(panel.actions.length, 1);
    assert.equal((await api('/api/panels/nope/actions/x', { method: 'POST', headers: change, body: '{}' })).status, 404);
  });

  it('says staff lookups are not configured without the staff service', async () => {
    assert.deepEqual((await api('/api/staff')).body, { configured: false });
    assert.equal((await api('/api/staff/search?q=a')).status, 404);
  });

  it('pushes a change event when the data changes', async () => {
    const controller = new AbortController();
    const res = await fetch(`${t.adminUrl}api/events`, { headers: auth, signal: controller.signal });
    assert.match(String(res.headers.get('content-type')), /text\/event-stream/);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    const deadline = Date.now() + 10_000;
    let posted = false;
    while (!/event: change[\s\S]*event: change/.test(seen) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value);
      // The first change event is the initial state; post an update once it arrived and expect another.
      if (!posted && seen.includes('event: change')) {
        posted = true;
        await t.post(update(11, 2, 1, [item('5', 'B')]));
      }
    }
    controller.abort();
    assert.match(seen, /event: hello/);
    assert.match(seen, /event: change[\s\S]*event: change/);
  });
});
