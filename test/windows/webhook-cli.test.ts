import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/child-agent';
import { item, price, update } from '../helpers/fixtures';
import { laneDir, lastSequence, post, readDb, sample } from './lane';
import { cli, startAgent, waitFor, winPath, writeWindowsConfig, type WindowsAgent } from './wine';

/**
 * The webhook of a Windows agent, called over loopback from this side as head office's service would,
 * and the command line as Windows processes reaching that agent over its named pipe (and what each
 * command does when no agent runs).
 */
const TOKEN = 'windows-lane-token-0123456789';
const ORIGIN = 'menus.example.com';
const HEADERS = { authorization: `Bearer ${TOKEN}`, origin: `https://${ORIGIN}` };

function body(location: number, sequence: number, parent: number, pence: number): Buffer {
  return Buffer.from(JSON.stringify(update(location, sequence, parent, [item('501', 'IT-501', [price('2026-12-01', '2027-12-31', 'Eat In', (pence / 100).toFixed(2))])])));
}

describe('Windows: the webhook and the command line over the named pipe', () => {
  const work = laneDir('webhook');
  const dataDir = path.join(work, 'data');
  const out = { outDir: path.join(work, 'out') };
  let config = '';
  const args = (...a: string[]): string[] => [...a, '--config', winPath(config)];
  let agent: WindowsAgent;
  const eatInPrice = (location: number): number | undefined =>
    readDb(path.join(dataDir, 'pos-sync.db'), (db) => (db.prepare("SELECT sell_price_minor AS p FROM pos_prices WHERE location_id = ? AND tariff_name = 'Eat In'").get(location) as { p: number } | undefined)?.p);

  before(async () => {
    config = writeWindowsConfig(path.join(work, 'config.json'), {
    dataDir: winPath(dataDir),
    webhook: { port: 0, bearerToken: TOKEN, expectedOrigin: ORIGIN, maxBodyBytes: 64 * 1024 },
    // A fixed port: admin-url gives a link only when it knows the window's address.
    admin: { port: await freePort() },
    sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 },
    backup: { enabled: false },
  });
    agent = await startAgent(config, dataDir, out);
  });
  after(async () => {
    await agent?.stop();
  });

  it('names its pipe (random, not derived from the folder) in the data folder, where the command line finds it', async () => {
    for (const command of ['pause', 'resume']) {
      const r = await cli(args(command), out);
      assert.equal(r.code, 0, r.stderr);
      const pid = /Handed to the running agent \(pid (\d+)\)/.exec(r.stdout)?.[1];
      assert.ok(pid !== undefined, `${command}: ${r.stdout}`);
    }
    assert.match(fs.readFileSync(path.join(dataDir, 'control-pipe'), 'utf8'), /^\\\\\.\\pipe\\pos-sync-agent-[0-9a-f]{16}-[0-9a-f]{32}\n$/);
  });

  it('receives, answers a duplicate, holds an update until its parent arrives, then applies both', async () => {
    const first = await post(agent.url, sample(1), HEADERS);
    assert.equal(first.status, 200, first.body);
    const again = await post(agent.url, sample(1), HEADERS);
    assert.equal(again.status, 200);
    assert.equal((JSON.parse(again.body) as { status: string }).status, 'duplicate');
    await waitFor('1041 applied', () => lastSequence(dataDir, 3021) === 1041);
    assert.equal((await post(agent.url, sample(3), HEADERS)).status, 200);
    const waiting = await cli(args('status'), out);
    assert.equal(waiting.code, 0, waiting.stderr);
    assert.match(waiting.stdout, /gap: update 3021:1043 \(received .*\) needs update 1042, which has not arrived/);
    assert.equal(lastSequence(dataDir, 3021), 1041);
    assert.equal((await post(agent.url, sample(2), HEADERS)).status, 200);
    await waitFor('1042 and 1043 applied', () => lastSequence(dataDir, 3021) === 1043);
  });

  it('refuses bad input precisely: quarantine (kept), 413, 401, 403', async () => {
    const quarantined = () => readDb(path.join(dataDir, 'agent.db'), (db) => (db.prepare('SELECT count(*) AS n FROM quarantine').get() as { n: number }).n);
    const before = quarantined();
    const bad = await post(agent.url, JSON.stringify({ ...JSON.parse(sample(1).toString('utf8')), ChangeSequence: 'one' }), HEADERS);
    assert.equal(bad.status, 400, bad.body);
    assert.match(bad.body, /"id":"invalid_envelope".*"field":"ChangeSequence"/);
    assert.doesNotMatch(bad.body, / {4}at /);
    assert.equal(quarantined(), before + 1);
    const big = await post(agent.url, Buffer.alloc(70 * 1024, 0x20), HEADERS);
    assert.equal(big.status, 413);
    assert.equal((await post(agent.url, sample(1), { origin: HEADERS.origin })).status, 401);
    assert.equal((await post(agent.url, sample(1), { ...HEADERS, authorization: 'Bearer not-the-token-at-all' })).status, 401);
    assert.equal((await post(agent.url, sample(1), { ...HEADERS, origin: 'https://evil.example.net' })).status, 403);
  });

  it('status, import, pause/resume, force-apply, resolve-conflict and admin-url reach the agent over the pipe', async () => {
    const status = await cli(args('status', '--json'), out);
    assert.equal(status.code, 0, status.stderr);
    const json = JSON.parse(status.stdout) as { locations: { locationId: number; lastChangeSequence: number }[] };
    assert.equal(json.locations.find((l) => l.locationId === 3021)?.lastChangeSequence, 1043);

    const file = path.join(work, 'manual delivery.json');
    fs.writeFileSync(file, body(77, 2, 1, 350));
    const imported = await cli(args('import', winPath(file)), out);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /running agent|agent \(pid/i);
    await waitFor('77:2 applied', () => lastSequence(dataDir, 77) === 2);

    // Paused: deliveries are stored, not applied; a conflict among them is resolved before resuming.
    const paused = await cli(args('pause'), out);
    assert.equal(paused.code, 0, paused.stderr);
    assert.equal((await post(agent.url, body(77, 3, 2, 360), HEADERS)).status, 200);
    assert.equal((await post(agent.url, body(77, 4, 3, 370), HEADERS)).status, 200);
    const conflict = await post(agent.url, body(77, 4, 3, 375), HEADERS);
    assert.equal((JSON.parse(conflict.body) as { status: string }).status, 'conflict');
    const resolved = await cli(args('resolve-conflict', '77:4', '--keep', 'later', '--reason', 'the later body is right'), out);
    assert.equal(resolved.code, 0, `${resolved.stdout}${resolved.stderr}`);
    assert.equal(lastSequence(dataDir, 77), 2, 'paused: stored, not applied');
    const resumed = await cli(args('resume'), out);
    assert.equal(resumed.code, 0, resumed.stderr);
    await waitFor('77:3 and 77:4 applied after resume', () => lastSequence(dataDir, 77) === 4);
    assert.equal(eatInPrice(77), 375, 'the later body was kept');

    assert.equal((await post(agent.url, body(77, 6, 5, 390), HEADERS)).status, 200);
    const forced = await cli(args('force-apply', '77:6', '--reason', 'head office lost 77:5'), out);
    assert.equal(forced.code, 0, `${forced.stdout}${forced.stderr}`);
    assert.equal(lastSequence(dataDir, 77), 6);

    const link = await cli(args('admin-url'), out);
    assert.equal(link.code, 0, link.stderr);
    const url = /(http:\/\/127\.\d+\.\d+\.\d+:\d+\/\?login=\S+)/.exec(link.stdout)?.[1];
    assert.ok(url, link.stdout);
    const res = await fetch(url, { redirect: 'manual' });
    assert.ok(res.status < 400, `the login link answered ${res.status}`);
  });

  it('with no agent running: status says so, and the changing commands do their work themselves', async () => {
    assert.equal(await agent.stop(), 0, agent.output());
    assert.equal(fs.existsSync(path.join(dataDir, 'control-pipe')), false, 'a clean stop removes the file naming its pipe');
    const status = await cli(args('status'), out);
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /Agent not running/);
    // Each changing command does its work directly on the folder, under the folder's lock.
    const direct = /^No agent is running: done directly on the data folder\./m;
    const paused = await cli(args('pause'), out);
    assert.equal(paused.code, 0, paused.stderr);
    assert.match(paused.stdout, direct);
    const file = path.join(work, 'offline delivery.json');
    fs.writeFileSync(file, body(77, 8, 7, 400));
    const imported = await cli(args('import', winPath(file)), out);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /Stored update 77:8 .*: new\.\r?\nNot applied yet/);
    const forced = await cli(args('force-apply', '77:8', '--reason', 'head office lost 77:7'), out);
    assert.equal(forced.code, 0, `${forced.stdout}${forced.stderr}`);
    assert.match(forced.stdout, direct);
    assert.equal(lastSequence(dataDir, 77), 8, 'force-apply applies even while paused, as with an agent');
    const resumed = await cli(args('resume'), out);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, direct);
    // No login link while no agent runs: one made now would be for whoever listens on the port.
    const link = await cli(args('admin-url'), out);
    assert.equal(link.code, 1, `${link.stdout}${link.stderr}`);
    assert.doesNotMatch(link.stdout, /login=/);
    assert.match(link.stderr, /no agent is running on .*, so there is no status window to log in to/);
  });
});
