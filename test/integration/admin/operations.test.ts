import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { csrfTokenFor } from '../../../src/admin/security';
import type { OperationsAlert } from '../../../src/admin/summary';
import { listBackups } from '../../../src/ops/backup/files';
import { backupDir } from '../../../src/ops/paths';
import type { TunnelSupervisor } from '../../../src/ops/tunnel';
import { sampleBodies } from '../../helpers/fixtures';
import { startOpsAdminAgent, TUNNEL_CHECK_TIMEOUT_SECONDS, until, zoneDifferentFromMachine, type OpsAdminAgent } from '../../helpers/ops/ops-admin-agent';
import { readZip } from '../../helpers/ops/read-zip';

/**
 * The operations part of the status window over real HTTP, against the real operations services and
 * the stand-in tunnel: panels, banners, the traffic light, and the actions behind token + CSRF.
 */

interface Panel {
  name: string;
  title: string;
  items: { label: string; value: string; level?: string }[];
  actions: { id: string; label: string; confirm: string | null }[];
}

function client(t: OpsAdminAgent) {
  const auth = { authorization: `Bearer ${t.token}` };
  const change = { ...auth, 'x-csrf-token': csrfTokenFor(t.token), 'content-type': 'application/json' };
  const call = async <T = unknown>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${t.adminUrl}${path.replace(/^\//, '')}`, { ...init, headers: { ...auth, ...(init.headers as Record<string, string> | undefined) } });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
  };
  return {
    auth,
    change,
    call,
    panels: async (): Promise<Panel[]> => (await call<{ panels: Panel[] }>('/api/panels')).body.panels,
    alerts: async (): Promise<OperationsAlert[]> => (await call<{ alerts: OperationsAlert[] }>('/api/status')).body.alerts,
    action: (panel: string, id: string) => call<{ message?: string; error?: { id: string; message: string } }>(`/api/panels/${panel}/actions/${id}`, { method: 'POST', headers: change, body: '{}' }),
  };
}

const item = (panel: Panel | undefined, label: string): string | undefined => panel?.items.find((i) => i.label === label)?.value;

/** The reason a check gives when the hung stand-in tunnel never answers. */
const NO_ANSWER = `no answer within ${TUNNEL_CHECK_TIMEOUT_SECONDS} s`;

describe('operations in the status window (API)', { timeout: 120_000 }, async () => {
  const DAY = 86_400_000;
  // Retention runs with a clock 20 days ahead, so an update applied now is 20 days old to it.
  const t = await startOpsAdminAgent({ admin: { liveCheckMs: 100 } }, { tunnel: { restartAfterFailedChecks: 0 }, retentionClock: () => new Date(Date.now() + 20 * DAY) });
  const api = client(t);
  await until('the first backup', () => listBackups(backupDir(t.config)).length > 0);
  await until('the tunnel running', () => t.agent.service<TunnelSupervisor>('tunnel')!.state().phase === 'running');

  it('needs the token to read and the CSRF token (and no foreign Origin) to act', async () => {
    assert.equal((await fetch(`${t.adminUrl}api/panels`)).status, 401);
    const backupsBefore = listBackups(backupDir(t.config)).length;
    const noCsrf = await fetch(`${t.adminUrl}api/panels/backup/actions/backup-now`, { method: 'POST', headers: api.auth });
    assert.equal(noCsrf.status, 403);
    const foreign = await fetch(`${t.adminUrl}api/panels/ops/actions/write-diagnostics`, { method: 'POST', headers: { ...api.change, origin: 'https://evil.example' } });
    assert.equal(foreign.status, 403);
    const noToken = await fetch(`${t.adminUrl}api/panels/backup/actions/backup-now`, { method: 'POST', headers: { 'x-csrf-token': csrfTokenFor(t.token) } });
    assert.equal(noToken.status, 401);
    const settings = await fetch(`${t.adminUrl}api/settings`, { method: 'PUT', headers: { ...api.auth, 'content-type': 'application/json' }, body: JSON.stringify({ retention: { rawPayloadDays: 1 } }) });
    assert.equal(settings.status, 403);
    assert.equal(listBackups(backupDir(t.config)).length, backupsBefore, 'no refused request ran an action');
    assert.equal(fs.existsSync(`${t.config.dataDir}/diagnostics`), false);
    assert.equal((await api.action('backup', 'no-such-action')).status, 404);
    assert.equal((await api.action('nope', 'x')).status, 404);
  });

  it('shows a panel per running operations service, read from the services', async () => {
    // The tunnel is checked every 0.2 s from this busy process: one check may fail on a stalled event
    // loop, so the running view is awaited (any panel read that shows it) rather than read once.
    let panels: Panel[] = [];
    await until('the tunnel panel says running, answered from outside', async () => {
      panels = await api.panels();
      const tunnelPanel = panels.find((p) => p.name === 'tunnel');
      return item(tunnelPanel, 'State') === 'running' && /^answered in \d+ ms at /.test(item(tunnelPanel, 'Last check from outside') ?? '');
    });
    assert.deepEqual(panels.map((p) => p.name), ['tunnel', 'disk', 'backup', 'retention', 'clock', 'ops']);
    const byName = new Map(panels.map((p) => [p.name, p]));
    assert.equal(item(byName.get('tunnel'), 'State'), 'running');
    assert.equal(item(byName.get('tunnel'), 'Public address'), t.publicUrl);
    assert.equal(item(byName.get('tunnel'), 'Webhook address for head office'), `${t.publicUrl}${t.config.webhook.path}`);
    assert.match(item(byName.get('tunnel'), 'Last check from outside')!, /^answered in \d+ ms at /);
    assert.match(item(byName.get('disk'), 'Free space')!, /^[\d.]+ \w+ free of [\d.]+ \w+$/);
    assert.match(item(byName.get('backup'), 'Last backup')!, /backup-\d{8}T\d+Z/);
    assert.equal(item(byName.get('retention'), 'Update bodies (after applying)'), '30 days (configured)');
    assert.equal(item(byName.get('clock'), "This PC's timezone"), t.config.defaultTimezone);
    assert.equal(item(byName.get('ops'), 'Tunnel'), undefined, 'a configured tunnel is not "not configured"');
    assert.deepEqual(panels.flatMap((p) => p.actions.map((a) => `${p.name}:${a.id}`)), ['tunnel:restart', 'disk:check', 'backup:backup-now', 'retention:prune-now', 'ops:write-diagnostics']);
    // Head office's address is the tunnel's public one.
    const settings = (await api.call<{ webhookUrl: string; webhookUrlIsPublic: boolean }>('/api/settings')).body;
    assert.equal(settings.webhookUrl, `${t.publicUrl}${t.config.webhook.path}`);
    assert.equal(settings.webhookUrlIsPublic, true);
    let alerts: OperationsAlert[] = [];
    let summary = t.admin.summary()!;
    await until('no banner, and the tray amber for the locations', async () => {
      alerts = await api.alerts();
      summary = t.admin.summary()!;
      return alerts.length === 0 && summary.light === 'amber' && !/tunnel/.test(summary.headline);
    });
    assert.deepEqual(alerts, []);
    assert.equal(summary.light, 'amber', 'no updates yet: amber, but from the locations, not the tunnel');
    assert.doesNotMatch(summary.headline, /tunnel/);
  });

  it('a tunnel that dies shows "restarting" (amber), one that hangs "unreachable" (red); the live stream says so', async () => {
    assert.equal((await t.post(sampleBodies()[0]!.raw)).status, 200);
    await t.settle();
    await until('the tray green once an update is applied', () => t.admin.summary()!.light === 'green');
    // The live stream: the first tick announces; then a tunnel change alone must announce again.
    const controller = new AbortController();
    const events = await fetch(`${t.adminUrl}api/events`, { headers: api.auth, signal: controller.signal });
    const reader = events.body!.getReader();
    let seen = '';
    const changes = (): number => seen.split('event: change').length - 1;
    const pump = (async () => {
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done) return;
        seen += decoder.decode(value);
      }
    })();
    try {
      await until('the first change event', () => changes() >= 1);
      const before = changes();
      t.tunnelMode('die');
      // Kept from the read that showed it: a check can pass in the moment a restarted stand-in lives
      // before it dies again, so a second read may find no banner.
      let restarting: OperationsAlert | undefined;
      await until('the restarting banner', async () => (restarting = (await api.alerts()).find((a) => a.id === 'tunnel' && /restarting/.test(a.title))) !== undefined);
      assert.equal(restarting!.light, 'amber');
      assert.ok(restarting!.text.includes(t.publicUrl!), 'the public URL is in the banner');
      await until('a change event for the tunnel', () => changes() > before);
      await until('the exit reason', async () => (await api.alerts()).some((a) => /exited with code 3/.test(a.text)));
      // A tunnel told to die keeps dying and restarting, so each view is awaited rather than read once.
      await until('the amber restarting summary', () => {
        const summary = t.admin.summary()!;
        return summary.light === 'amber' && /^The tunnel is restarting — updates cannot arrive meanwhile\.$/.test(summary.headline);
      });
      await until('the tunnel panel with the exit reason', async () => {
        const tunnelPanel = (await api.panels()).find((p) => p.name === 'tunnel')!;
        return /^(restarting|starting)$/.test(item(tunnelPanel, 'State') ?? '') && /exited with code 3/.test(item(tunnelPanel, 'Why') ?? '');
      });

      t.tunnelMode('ok');
      await until('running again', async () => (await api.alerts()).length === 0);
      t.tunnelMode('hang');
      // The first failed check after the switch may still see the old connection close; wait for a
      // check that met the hanging tunnel.
      await until('the unreachable banner for a hanging tunnel', async () =>
        (await api.alerts()).some((a) => a.id === 'tunnel' && a.light === 'red' && a.text.includes(NO_ANSWER)),
      );
      const unreachable = (await api.alerts()).find((a) => a.id === 'tunnel')!;
      assert.equal(unreachable.title, 'Head office cannot reach this PC: the tunnel does not answer from outside.');
      assert.equal(t.admin.summary()!.light, 'red', 'the tray turns red too');
      await until('the tunnel panel says unreachable, and why', async () => {
        const unreachablePanel = (await api.panels()).find((p) => p.name === 'tunnel');
        return item(unreachablePanel, 'State') === 'unreachable from outside' &&
          (item(unreachablePanel, 'Why') ?? '').endsWith(`/healthz not reachable from outside: ${NO_ANSWER}`);
      });
    } finally {
      t.tunnelMode('ok');
      controller.abort();
      await pump;
    }
    await until('running again', async () => (await api.alerts()).length === 0);
  });

  it('Restart tunnel restarts it (audited)', async () => {
    const pid = (await api.panels()).find((p) => p.name === 'tunnel')!.items.find((i) => i.label === 'Process')!.value;
    const r = await api.action('tunnel', 'restart');
    assert.equal(r.status, 200);
    assert.match(r.body.message!, /^The tunnel was restarted; it is (starting|running) now\.$/);
    await until('a new process', async () => (await api.panels()).find((p) => p.name === 'tunnel')!.items.find((i) => i.label === 'Process')!.value !== pid);
    const audit = t.agent.core.agentDb.prepare("SELECT actor, action FROM audit_log WHERE action = 'panel:tunnel:restart'").all() as { actor: string }[];
    assert.equal(audit.length, 1);
    assert.match(audit[0]!.actor, /\(status window\)$/);
  });

  it('Back up now writes a new backup file', async () => {
    const before = listBackups(backupDir(t.config)).map((b) => b.file);
    await new Promise((r) => setTimeout(r, 5)); // backup names carry the millisecond
    const r = await api.action('backup', 'backup-now');
    assert.equal(r.status, 200);
    const file = /^Backup written: (.+backup-\d{8}T\d+Z) \(/.exec(r.body.message!)?.[1];
    assert.ok(file, r.body.message);
    assert.ok(fs.statSync(file).size > 0);
    assert.ok(!before.includes(file), 'a new file');
    assert.equal(listBackups(backupDir(t.config))[0]!.file, file);
    assert.match(item((await api.panels()).find((p) => p.name === 'backup'), 'Last backup')!, new RegExp(listBackups(backupDir(t.config))[0]!.name));
  });

  it('Write diagnostics writes the support zip and says where', async () => {
    const r = await api.action('ops', 'write-diagnostics');
    assert.equal(r.status, 200);
    const file = /^Diagnostics written to (.+\.zip) \(/.exec(r.body.message!)?.[1];
    assert.ok(file, r.body.message);
    assert.ok(file.startsWith(`${t.config.dataDir}/diagnostics/pos-sync-diagnostics-`));
    const zip = readZip(file);
    assert.ok(zip.has('operations.json') && zip.has('config.json') && zip.has('database.json'));
    const ops = JSON.parse(zip.get('operations.json')!.toString('utf8')) as { tunnel: { phase: string; publicUrl: string } };
    assert.equal(ops.tunnel.publicUrl, t.publicUrl);
    assert.ok(!zip.get('config.json')!.toString('utf8').includes(t.token), 'the admin token is not in the bundle');
    assert.match(item((await api.panels()).find((p) => p.name === 'ops'), 'Last diagnostics')!, new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(`));
  });

  it('retention days set in the window win over the configuration from the next prune, and can be reset', async () => {
    const db = t.agent.core.agentDb;
    const bodies = (): number => (db.prepare("SELECT count(*) AS n FROM inbox WHERE state = 'applied' AND id IN (SELECT inbox_id FROM inbox_bodies)").get() as { n: number }).n;
    assert.equal(bodies(), 1);
    const configured = (await api.call<{ retention: { enabled: boolean; configured: Record<string, number> } }>('/api/settings')).body.retention;
    assert.deepEqual(configured, { enabled: true, configured: { rawPayloadDays: 30, quarantineDays: 90, rangeDays: 365, deliveryDays: 365 } });
    // 20 days old, configured 30: nothing to prune.
    let r = await api.action('retention', 'prune-now');
    assert.equal(r.body.message, 'Pruned: nothing was old enough.');
    assert.equal(bodies(), 1);

    const bad = await api.call('/api/settings', { method: 'PUT', headers: api.change, body: JSON.stringify({ retention: { rawPayloadDays: 0 } }) });
    assert.equal(bad.status, 400);
    const put = await api.call<{ settings: { retention: Record<string, number> } }>('/api/settings', { method: 'PUT', headers: api.change, body: JSON.stringify({ retention: { rawPayloadDays: 10 } }) });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body.settings.retention, { rawPayloadDays: 10 });
    assert.equal(item((await api.panels()).find((p) => p.name === 'retention'), 'Update bodies (after applying)'), '10 days (set in this window; configured: 30)');
    // Taken at the next run, without a restart.
    r = await api.action('retention', 'prune-now');
    assert.equal(r.body.message, 'Pruned: 1 update body.');
    assert.equal(bodies(), 0);
    assert.match(item((await api.panels()).find((p) => p.name === 'retention'), 'Last prune')!, /1 update body$/);

    await api.call('/api/settings', { method: 'PUT', headers: api.change, body: JSON.stringify({ retention: { rawPayloadDays: null } }) });
    assert.equal(item((await api.panels()).find((p) => p.name === 'retention'), 'Update bodies (after applying)'), '30 days (configured)');
    assert.deepEqual(JSON.parse(fs.readFileSync(`${t.config.dataDir}/ui-settings.json`, 'utf8')).retention, {});
  });
});

describe('operations in the status window without a tunnel, with a full disk and a wrong timezone', { timeout: 60_000 }, async () => {
  const zone = zoneDifferentFromMachine();
  const t = await startOpsAdminAgent({ disk: { criticalFreeBytes: 2 ** 52 }, locations: { '3021': { timezone: zone } } });
  const api = client(t);

  it('banners: disk critical (red) and the timezone note (no light); the tunnel is "not configured"', async () => {
    const alerts = await api.alerts();
    assert.deepEqual(alerts.map((a) => [a.id, a.light]), [['disk', 'red'], ['timezone', null]]);
    assert.equal(alerts[0]!.title, 'The disk is almost full — updates will be refused when it is.');
    assert.ok(alerts[1]!.details!.some((d) => d.includes(zone)));
    const summary = t.admin.summary()!;
    assert.equal(summary.light, 'red');
    assert.match(summary.headline, /^The disk is almost full/);
    assert.doesNotMatch(summary.headline, /clock/i);
    const panels = await api.panels();
    assert.deepEqual(panels.map((p) => p.name), ['disk', 'backup', 'retention', 'clock', 'ops']);
    assert.match(item(panels.find((p) => p.name === 'ops'), 'Tunnel')!, /^not configured/);
    assert.equal(panels.find((p) => p.name === 'disk')!.items[0]!.level, 'error');
    const settings = (await api.call<{ webhookUrlIsPublic: boolean }>('/api/settings')).body;
    assert.equal(settings.webhookUrlIsPublic, false);
  });
});
