import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { AgentMetrics } from '../../../src/admin/metrics';
import { StaffService } from '../../../src/employees/service';
import { silentLogger } from '../../../src/log';
import { startAdminAgent, rawRequest } from '../../helpers/admin';
import { SIM_TODAY, startSimulator, staffConfig } from '../employees/sim';
import { sampleBodies, testConfig } from '../../helpers/fixtures';
import { needs } from '../../helpers/system';

/** GET /metrics over real HTTP: its own token, the figures after real deliveries, no personal data. */

const METRICS_TOKEN = 'metrics-test-token-0123456789abcdef';
const WEBHOOK_TOKEN = 'webhook-test-token-0123456789abcdef';

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

describe('GET /metrics', async () => {
  const t = await startAdminAgent({ metrics: { bearerToken: METRICS_TOKEN }, webhook: { bearerToken: WEBHOOK_TOKEN } });
  const url = `${t.adminUrl}metrics`;
  const scrape = async (): Promise<Sample[]> => {
    const res = await rawRequest(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(res.status, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return parse(res.body);
  };

  it('refuses a scraper without the metrics token, and the window token is not it', async () => {
    assert.equal((await rawRequest(url)).status, 401);
    const windowToken = await rawRequest(url, { headers: { authorization: `Bearer ${t.token}` } });
    assert.equal(windowToken.status, 401);
    assert.match(String(windowToken.headers['www-authenticate']), /^Bearer /);
    assert.equal((await rawRequest(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}x` } })).status, 401);
  });

  it('does not open the window with the metrics token', async () => {
    const res = await rawRequest(`${t.adminUrl}api/status`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(res.status, 401);
  });

  it('refuses a foreign Host (DNS rebinding) even with the token', async () => {
    const res = await rawRequest(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}`, host: `evil.example:${t.adminPort}` } });
    assert.equal(res.status, 421);
  });

  it('counts the refused calls by reason', async () => {
    // The two tests above refused three calls for their token and one for its Host.
    const samples = await scrape();
    assert.equal(value(samples, 'pos_sync_metrics_refused_total', { reason: 'bearer_token' }), 3);
    assert.equal(value(samples, 'pos_sync_metrics_refused_total', { reason: 'host_not_allowed' }), 1);
  });

  it('keeps one set of process monitors however often the admin service restarts', async () => {
    // prom-client's event-loop monitor and GC observer cannot be stopped: each restart must not add more.
    const lag = 'pos_sync_process_nodejs_eventloop_lag_seconds';
    const a = new AgentMetrics({ agent: t.agent, log: silentLogger, services: [] });
    const shared = a.registry.getSingleMetric(lag);
    assert.ok(shared, 'the process figures are in the registry');
    a.close();
    assert.equal(a.registry.getSingleMetric(lag), undefined, 'closed');
    const b = new AgentMetrics({ agent: t.agent, log: silentLogger, services: [] });
    assert.equal(b.registry.getSingleMetric(lag), shared, 'the same monitor, not a new one');
    b.close();
    const res = await rawRequest(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.match(res.body, /^pos_sync_process_nodejs_eventloop_lag_seconds /m, 'closing another registry left the live one whole');
  });

  it('reports applies, the gap, deliveries and refusals by location and reason', async () => {
    const [first, , third] = sampleBodies();
    const auth = { authorization: `Bearer ${WEBHOOK_TOKEN}` };
    assert.equal((await t.post(first!.raw, auth)).status, 200);
    assert.equal((await t.post(third!.raw, auth)).status, 200);
    assert.equal((await t.post(first!.raw)).status, 401);
    await t.settle();
    // The webhook thread tells the main thread of stored deliveries in batches (NOTICE_BATCH_MS in
    // receiver-worker.ts), which can come after the drain: the counter is read once they have.
    for (const deadline = Date.now() + 5_000; t.agent.storedDeliveries < 2 && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 10));
    const s = await scrape();
    const location = { location: '3021' };
    assert.equal(value(s, 'pos_sync_last_applied_change_sequence', location), 1041);
    assert.ok((value(s, 'pos_sync_last_applied_age_seconds', location) ?? -1) >= 0);
    assert.equal(value(s, 'pos_sync_pending_updates', location), 1);
    assert.equal(value(s, 'pos_sync_gap_waiting_updates', location), 1);
    // The window's light for the location: amber, a gap younger than admin.gapAlertMinutes.
    assert.equal(value(s, 'pos_sync_location_light', location), 1);
    assert.equal(value(s, 'pos_sync_location_for_site', location), 1);
    assert.ok((value(s, 'pos_sync_gap_oldest_age_seconds', location) ?? -1) >= 0);
    assert.equal(value(s, 'pos_sync_webhook_deliveries_stored_total'), 2);
    const refused = s.filter((x) => x.name === 'pos_sync_webhook_refused_total');
    assert.equal(refused.reduce((a, b) => a + b.value, 0), 1);
    assert.equal(value(s, 'pos_sync_apply_duration_seconds_count', location), 1);
    assert.equal(value(s, 'pos_sync_quarantined_last_24h'), 0);
    assert.equal(value(s, 'pos_sync_applying_paused'), 0);
    assert.ok((value(s, 'pos_sync_file_bytes', { file: 'till', part: 'main' }) ?? 0) > 0);
    assert.ok((value(s, 'pos_sync_file_bytes', { file: 'agent', part: 'main' }) ?? 0) > 0);
    const info = s.find((x) => x.name === 'pos_sync_agent_info');
    assert.equal(info?.value, 1);
    assert.match(info!.labels.version ?? '', /^\d+\.\d+\.\d+/);
    assert.match(info!.labels.sqlite ?? '', /^3\.\d+/);
  });

  it('leaves out what it does not know, rather than reading 0', async () => {
    // No tunnel, no backup taken yet, no clock compared: a 0 would read as a tunnel down, a backup
    // just taken, a clock exactly right (and fire or silence the shipped alerts).
    const res = await rawRequest(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    for (const name of ['pos_sync_tunnel_up', 'pos_sync_backup_last_age_seconds', 'pos_sync_clock_skew_seconds']) {
      assert.doesNotMatch(res.body, new RegExp(`^${name} `, 'm'), `${name} is absent`);
      assert.match(res.body, new RegExp(`^# TYPE ${name} gauge$`, 'm'), `${name} is still described`);
    }
  });

  it('passes promtool check metrics', needs('promtool (Prometheus)'), async () => {
    const res = await rawRequest(url, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const r = spawnSync('promtool', ['check', 'metrics'], { input: res.body, encoding: 'utf8' });
    assert.equal(r.error, undefined, 'promtool is missing: apt-get install prometheus (scripts/test-prerequisites.mjs)');
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  });

  it('carries only label names that hold no personal data', async () => {
    const allowed = new Set(['location', 'reason', 'file', 'part', 'resource', 'state', 'area', 'le', 'version', 'node', 'sqlite', 'type', 'kind', 'space', 'quantile', 'major', 'minor', 'patch']);
    for (const sample of await scrape()) for (const label of Object.keys(sample.labels)) assert.ok(allowed.has(label), `${sample.name} has label ${label}`);
  });
});

describe('GET /metrics without a metrics token', async () => {
  const t = await startAdminAgent();
  it('is not served, even with the window token', async () => {
    const res = await rawRequest(`${t.adminUrl}metrics`, { headers: { authorization: `Bearer ${t.token}` } });
    assert.equal(res.status, 404);
  });
});

describe('GET /metrics through the tunnel (on the webhook listener)', async () => {
  const open = await startAdminAgent({ metrics: { bearerToken: METRICS_TOKEN, throughTunnel: true } });
  const closed = await startAdminAgent({ metrics: { bearerToken: METRICS_TOKEN } });

  it('answers there only when metrics.throughTunnel is on, with the same token check', async () => {
    const res = await rawRequest(`${open.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}`, host: 'site-a.tunnel.example' } });
    assert.equal(res.status, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.equal(value(parse(res.body), 'pos_sync_applying_paused'), 0);
    const refused = await rawRequest(`${open.baseUrl}/metrics`, { headers: { authorization: `Bearer ${open.token}` } });
    assert.equal(refused.status, 401);
    assert.equal((await rawRequest(`${open.baseUrl}/metrics`)).status, 401);
    assert.equal((await rawRequest(`${closed.baseUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status, 404);
  });

  it('opens nothing else of the window there', async () => {
    for (const p of ['/api/status', '/', '/metrics/../api/status']) {
      const res = await rawRequest(`${open.baseUrl}${p}`, { headers: { authorization: `Bearer ${open.token}` } });
      assert.equal(res.status, 404, `${p}: ${res.status}`);
    }
  });

  it('is refused at start-up without a metrics token, naming the key', () => {
    assert.throws(() => testConfig({ metrics: { throughTunnel: true } }), /metrics\.bearerToken/);
  });
});

describe('GET /metrics with the staff service', async () => {
  const { running } = await startSimulator({ employees: 60 });
  const base = staffConfig(running.url);
  const staff = new StaffService(testConfig({ employees: base.employees }), silentLogger, { now: () => new Date(`${SIM_TODAY}T10:00:00Z`) });
  const t = await startAdminAgent({ employees: base.employees, metrics: { bearerToken: METRICS_TOKEN } }, { services: [staff] });

  it('counts rights to work expiring and expired, and the sync age, with no one named', async () => {
    await staff.sync();
    const warnings = staff.residencyWarnings();
    const expired = warnings.filter((w) => (w.residency.daysToExpiry ?? 0) < 0).length;
    assert.ok(warnings.length > expired && expired > 0, 'the simulator has staff expiring and expired');
    const res = await rawRequest(`${t.adminUrl}metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(res.status, 200);
    const s = parse(res.body);
    assert.equal(value(s, 'pos_sync_rights_to_work', { state: 'expired' }), expired);
    assert.equal(value(s, 'pos_sync_rights_to_work', { state: 'expiring' }), warnings.length - expired);
    assert.ok((value(s, 'pos_sync_staff_sync_age_seconds', { resource: 'employees' }) ?? -1) >= 0);
    assert.equal(value(s, 'pos_sync_staff_sync_failing', { resource: 'employees' }), 0);
    for (const w of warnings) {
      assert.ok(!res.body.includes(w.employee.name), 'no name in the scrape');
      if (w.employee.employeeNumber) assert.ok(!res.body.includes(`"${w.employee.employeeNumber}"`), 'no employee number in a label');
    }
  });
});
