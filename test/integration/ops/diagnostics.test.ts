import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parseConfig } from '../../../src/config/load';
import { redactor } from '../../../src/log';
import { writeDiagnostics } from '../../../src/ops/diagnostics';
import { startTestAgent } from '../../helpers/agent';
import { item, price, tempDir, update } from '../../helpers/fixtures';
import { readZip } from '../../helpers/ops/read-zip';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const BEARER = 'diag-bearer-4b7e1c0d9a';
const EMPLOYEE_PASSWORD = 'diag-emp-pass-88f1';
const TUNNEL_ARG_TOKEN = 'diag-tunnel-arg-3c2d1e';
const STAFF_NAME = 'Zebedee Quillfeather';
const NI = 'QQ123456C';
const PAYLOAD_MARKER = 'Secret Recipe Burger';

describe('diagnostics bundle', () => {
  it('holds what support needs and no secrets or personal data', async () => {
    const dataDir = tempDir();
    const overrides = {
      dataDir,
      webhook: { bearerToken: BEARER },
      employees: { baseUrl: 'http://127.0.0.1:9/', organisationId: 1, auth: { type: 'basic', username: 'svc', password: EMPLOYEE_PASSWORD } },
      tunnel: { command: 'cloudflared', args: ['tunnel', 'run', '--token', TUNNEL_ARG_TOKEN], publicUrl: 'https://pos.example.com' },
    };
    const t = await startTestAgent(overrides);
    redactor.add(BEARER, EMPLOYEE_PASSWORD, TUNNEL_ARG_TOKEN);
    const body = update(7, 2, 1, [item('1', 'A', [price('2026-01-01', '2026-12-31', 'Eat In', 3)], [], { ItemName: PAYLOAD_MARKER })]);
    assert.equal((await t.post(body, { authorization: `Bearer ${BEARER}` })).status, 200);
    assert.equal((await t.post('not json', { authorization: `Bearer ${BEARER}` })).status, 400);
    await t.settle();
    // Personal data in the staff cache and in a log line: must not travel.
    t.agent.core.staffDb
      .prepare("INSERT INTO staff_employees (employee_id, employee_number, display_name, search_text, raw, refreshed_at) VALUES (1, 'E1', ?, 'x', ?, 'now')")
      .run(STAFF_NAME, JSON.stringify({ name: STAFF_NAME, ni: NI }));
    const logs = path.join(dataDir, 'logs');
    fs.mkdirSync(logs, { recursive: true });
    fs.writeFileSync(
      path.join(logs, 'agent.log'),
      `[info] applied location 7 change 2\n[warn] staff lookup for jo.bloggs@example.co.uk (${NI}) failed\n[error] token was ${BEARER}\n[warn] webhook call refused (invalid_bearer_token) from 203.0.113.9 (forwarded for 198.51.100.23, 2001:db8:85a3::8a2e:370:7334)\n`,
    );

    const out = path.join(tempDir(), 'diag.zip');
    const result = await writeDiagnostics(parseConfig(overrides), out);
    const zip = readZip(out);
    assert.deepEqual([...zip.keys()].sort(), [...result.entries].sort());
    for (const name of ['README.txt', 'config.json', 'versions.json', 'database.json', 'sync-state.json', 'operations.json', 'logs/agent.log']) {
      assert.ok(zip.has(name), `${name} in the bundle`);
    }
    const text = (name: string): string => zip.get(name)!.toString('utf8');
    const config = JSON.parse(text('config.json')) as { webhook: { bearerToken: string }; tunnel: { args: string[] } };
    assert.equal(config.webhook.bearerToken, '********');
    assert.deepEqual(config.tunnel.args, ['tunnel', 'run', '--token', '********']);
    const versions = JSON.parse(text('versions.json')) as Record<string, string>;
    assert.equal(versions.node, process.versions.node);
    assert.match(versions.sqlite!, /^3\.\d+\.\d+$/);
    assert.match(versions.tzTable!, /^\d{4}[a-z]$/);
    assert.equal(versions.tzIcu, process.versions.tz);
    assert.equal(versions.betterSqlite3, (JSON.parse(fs.readFileSync(require.resolve('better-sqlite3/package.json'), 'utf8')) as { version: string }).version);
    type FileReport = { integrityCheck: string[]; migrations: { name: string; knownToThisBuild: boolean }[]; rowCounts: Record<string, number> };
    const database = JSON.parse(text('database.json')) as Record<'till' | 'agent' | 'staff', FileReport>;
    for (const file of ['till', 'agent', 'staff'] as const) {
      assert.deepEqual(database[file].integrityCheck, ['ok'], file);
      assert.ok(database[file].migrations.length > 0 && database[file].migrations.every((m) => m.knownToThisBuild), file);
    }
    assert.equal(database.staff.rowCounts.staff_employees, 1, 'staff tables are counted, not copied');
    assert.equal(database.agent.rowCounts.inbox, 1);
    assert.equal(database.till.rowCounts.items, 1);
    const sync = JSON.parse(text('sync-state.json')) as { locations: { locationId: number; lastChangeSequence: number }[]; recentDeliveries: { sender: string }[]; quarantine: unknown[] };
    assert.deepEqual(sync.locations.map((l) => [l.locationId, l.lastChangeSequence]), [[7, 2]]);
    assert.ok(sync.recentDeliveries.every((d) => d.sender === '(omitted)'));
    assert.equal(sync.quarantine.length, 1);
    assert.match(text('logs/agent.log'), /staff lookup for <email> \(<NI number>\) failed/);

    const everything = [...zip.values()].map((b) => b.toString('utf8')).join('\n');
    assert.match(text('logs/agent.log'), /refused \(invalid_bearer_token\) from <ip> \(forwarded for <ip>, <ip>\)/);
    for (const forbidden of ['203.0.113.9', '198.51.100.23', '2001:db8:85a3', BEARER, EMPLOYEE_PASSWORD, TUNNEL_ARG_TOKEN, STAFF_NAME, NI, PAYLOAD_MARKER, 'jo.bloggs', '127.0.0.1 ', 'not json']) {
      assert.ok(!everything.includes(forbidden), `the bundle contains ${forbidden}`);
    }
  });

  it('`pos-sync-agent diagnose --out FILE` writes the bundle from the command line', () => {
    const dataDir = tempDir();
    const config = path.join(dataDir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir }));
    const out = path.join(dataDir, 'support.zip');
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'pos-sync-agent.cjs'), 'diagnose', '--out', out, '--config', config], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.includes(`, of the data folder ${dataDir} (configuration: ${config} (--config))`), r.stdout);
    assert.match(r.stdout, /^Diagnostics written: .*support\.zip \(/);
    const zip = readZip(out);
    assert.match(zip.get('database.json')!.toString('utf8'), /no database yet/);
    assert.ok(zip.has('versions.json'));
  });
});
