import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, startChildAgent, writeConfig, type ChildAgent } from '../helpers/child-agent';
import { sampleBodies, tempDir } from '../helpers/fixtures';

// js-yaml ships no types (a dev dependency used by the tests only).
const yaml = require('js-yaml') as { load(text: string): unknown; dump(value: unknown): string };

/**
 * A real Prometheus (Debian's `prometheus`) scrapes two real agents (`serve` processes, two data
 * folders) on loopback every second, with the shipped alert rules. The rules file is a generated
 * copy of packaging/prometheus/alerts.yml with every `for:` shortened to 1s and the gap threshold to
 * 2 s, so the alerts fire within the test; the expressions are the shipped ones otherwise. Each wait
 * is bounded (it fails with what Prometheus answered), and no timing is asserted.
 */

const ROOT = path.resolve(__dirname, '..', '..');
const METRICS_TOKEN = 'estate-scrape-token-0123456789abcdef';
const WEBHOOK_TOKEN = 'estate-webhook-token-0123456789abcdef';
const WAIT_MS = 60_000;

interface Site {
  readonly name: string;
  readonly dir: string;
  readonly adminPort: number;
  readonly configFile: string;
  agent: ChildAgent;
}

interface PromVector {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

interface PromAlert {
  readonly labels: Record<string, string>;
  readonly state: 'pending' | 'firing';
}

function testRulesCopy(dir: string): string {
  const rules = yaml.load(fs.readFileSync(path.join(ROOT, 'packaging', 'prometheus', 'alerts.yml'), 'utf8')) as { groups: { rules: { alert: string; expr: string; for?: string }[] }[] };
  for (const group of rules.groups) {
    for (const rule of group.rules) {
      rule.for = '1s';
      if (rule.alert === 'PosSyncChainGap') {
        assert.match(rule.expr, /> 1800$/);
        rule.expr = rule.expr.replace(/> 1800$/, '> 2');
      }
    }
  }
  const file = path.join(dir, 'alerts.test-copy.yml');
  fs.writeFileSync(file, yaml.dump(rules));
  return file;
}

async function waitFor<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  let last: T | undefined;
  for (;;) {
    try {
      last = await read();
      if (ok(last)) return last;
    } catch (err) {
      last = String(err) as T;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last answer: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('a real Prometheus scraping two agents', { timeout: 240_000 }, () => {
  const sites: Site[] = [];
  let prometheus: ChildProcess | null = null;
  let promOut = '';
  let promUrl = '';
  const work = tempDir('pos-sync-prom-');

  const start = (site: Site): Promise<ChildAgent> => startChildAgent(site.configFile, { POS_SYNC_SECRET_METRICS_BEARERTOKEN: METRICS_TOKEN });

  before(async () => {
    for (const name of ['a', 'b']) {
      const dir = path.join(work, `site-${name}`);
      fs.mkdirSync(dir);
      const adminPort = await freePort();
      const configFile = writeConfig(dir, {
        dataDir: dir,
        webhook: { host: '127.0.0.1', port: 0, bearerToken: WEBHOOK_TOKEN },
        admin: { port: adminPort },
        sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 },
        backup: { enabled: false },
        retention: { enabled: false },
      });
      const site: Site = { name, dir, adminPort, configFile, agent: undefined as unknown as ChildAgent };
      site.agent = await start(site);
      sites.push(site);
    }
    const promPort = await freePort();
    promUrl = `http://127.0.0.1:${promPort}`;
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s', scrape_timeout: '900ms' },
      rule_files: [testRulesCopy(work)],
      scrape_configs: [
        {
          job_name: 'pos-sync',
          authorization: { type: 'Bearer', credentials: METRICS_TOKEN },
          static_configs: sites.map((s) => ({ targets: [`127.0.0.1:${s.adminPort}`], labels: { site: s.name } })),
        },
      ],
    };
    const configFile = path.join(work, 'prometheus.yml');
    fs.writeFileSync(configFile, yaml.dump(config));
    fs.mkdirSync(path.join(work, 'tsdb'));
    prometheus = spawn('prometheus', [`--config.file=${configFile}`, `--storage.tsdb.path=${path.join(work, 'tsdb')}`, `--web.listen-address=127.0.0.1:${promPort}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    prometheus.stdout!.on('data', (c) => (promOut += c));
    prometheus.stderr!.on('data', (c) => (promOut += c));
    await waitFor('Prometheus to be ready', async () => (await fetch(`${promUrl}/-/ready`)).status, (s) => s === 200).catch((err: Error) => {
      throw new Error(`${err.message}\n${promOut.slice(-3000)}`);
    });
  });

  after(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((r) => prometheus!.once('exit', r));
      prometheus.kill('SIGTERM');
      await exited;
    }
    for (const s of sites) await s.agent.kill('SIGTERM');
    fs.rmSync(work, { recursive: true, force: true });
  });

  const query = async (expr: string): Promise<PromVector[]> => {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; data: { result: PromVector[] } };
    assert.equal(body.status, 'success');
    return body.data.result;
  };
  const valueOf = async (expr: string): Promise<number | null> => {
    const r = await query(expr);
    return r.length === 1 ? Number(r[0]!.value[1]) : null;
  };
  const firing = async (): Promise<PromAlert[]> => {
    const body = (await (await fetch(`${promUrl}/api/v1/alerts`)).json()) as { data: { alerts: PromAlert[] } };
    return body.data.alerts.filter((a) => a.state === 'firing');
  };
  const isFiring = (alerts: PromAlert[], name: string, site: string): boolean => alerts.some((a) => a.labels.alertname === name && a.labels.site === site);
  const post = (site: Site, body: Buffer, auth = true): Promise<Response> =>
    fetch(site.agent.url, { method: 'POST', headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${WEBHOOK_TOKEN}` } : {}) }, body });

  it('scrapes both sites', async () => {
    const up = await waitFor('both targets up', () => query('up{job="pos-sync"}'), (r) => r.length === 2 && r.every((v) => v.value[1] === '1'));
    assert.deepEqual(up.map((v) => v.metric.site).sort(), ['a', 'b']);
  });

  it('sees deliveries, a refused call and a gap, and fires the gap alert', async () => {
    const [first, second, third] = sampleBodies();
    const [a, b] = sites as [Site, Site];
    assert.equal((await post(a, first!.raw)).status, 200);
    assert.equal((await post(a, third!.raw)).status, 200);
    assert.equal((await post(b, first!.raw, false)).status, 401);
    await waitFor('site a applied 1041', () => valueOf('pos_sync_last_applied_change_sequence{site="a",location="3021"}'), (v) => v === 1041);
    await waitFor('site a stored 2', () => valueOf('pos_sync_webhook_deliveries_stored_total{site="a"}'), (v) => v === 2);
    await waitFor('site b refused 1', () => valueOf('sum(pos_sync_webhook_refused_total{site="b"})'), (v) => v === 1);
    await waitFor('site a has one update behind a gap', () => valueOf('pos_sync_gap_waiting_updates{site="a",location="3021"}'), (v) => v === 1);
    await waitFor('PosSyncChainGap firing for site a', firing, (alerts) => isFiring(alerts, 'PosSyncChainGap', 'a'));
    assert.equal(isFiring(await firing(), 'PosSyncChainGap', 'b'), false);

    // The missing update arrives: both apply and the alert resolves.
    assert.equal((await post(a, second!.raw)).status, 200);
    await waitFor('site a applied 1043', () => valueOf('pos_sync_last_applied_change_sequence{site="a",location="3021"}'), (v) => v === 1043);
    await waitFor('PosSyncChainGap resolved', firing, (alerts) => !isFiring(alerts, 'PosSyncChainGap', 'a'));
    const applies = await valueOf('pos_sync_apply_duration_seconds_count{site="a",location="3021"}');
    assert.equal(applies, 3);
  });

  it('fires site down for a stopped agent, and resolves when it is back', async () => {
    const b = sites[1]!;
    await b.agent.kill('SIGTERM');
    await waitFor('PosSyncSiteDown firing for site b', firing, (alerts) => isFiring(alerts, 'PosSyncSiteDown', 'b'));
    assert.equal(isFiring(await firing(), 'PosSyncSiteDown', 'a'), false);
    b.agent = await start(b);
    await waitFor('PosSyncSiteDown resolved', firing, (alerts) => !isFiring(alerts, 'PosSyncSiteDown', 'b'));
    assert.equal(await valueOf('up{site="b"}'), 1);
  });
});
