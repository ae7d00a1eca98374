import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, withChildAgent, writeConfig, writeRawConfig } from '../../helpers/child-agent';
import { assessSeverity } from '../../../src/domain/severity';
import type { LocationStatus } from '../../../src/store/read-models';
import { item, price, tempDir, update } from '../../helpers/fixtures';
import { reachableByNobody } from '../../helpers/second-user';

/**
 * Issue 24, point 2: with the untouched configuration, another account on the PC (nobody) posted a
 * far-ahead ChangeSequence with the current parent and owned the menu chain. Now the first start
 * makes a webhook token; an earlier version's folder without one does not start until the site chooses.
 */

const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');

function cli(config: string, args: string[]): { status: number | null; out: string; stdout: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--config', config], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout };
}

/** POSTs as the OS user nobody, the way the probe did (curl there; Node's fetch here). */
function postAsNobody(url: string, body: unknown, token: string | null = null): number {
  const script = `fetch(process.env.URL, { method: 'POST', headers: { 'content-type': 'application/json', ...(process.env.TOKEN ? { authorization: 'Bearer ' + process.env.TOKEN } : {}) }, body: process.env.BODY }).then((r) => console.log(r.status), (e) => { console.log('error ' + e.message); });`;
  const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', reachableByNobody(process.execPath), '-e', script], {
    encoding: 'utf8',
    cwd: '/',
    env: { PATH: process.env.PATH, URL: url, BODY: JSON.stringify(body), ...(token ? { TOKEN: token } : {}) },
    timeout: 30_000,
  });
  return Number(r.stdout.trim());
}

function post(url: string, body: unknown, token: string | null = null): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
}

const MENU = [item('100', '1', [price('2026-01-01', '2026-12-31', 'Eat In', 3.5)])];

describe('the webhook token an untouched install makes (a second OS account)', () => {
  it('first start makes an owner-only token; nobody\'s far-ahead update is refused, head office\'s with the token applied', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    // The untouched configuration: nothing about the webhook's token.
    const config = writeRawConfig(dir, { dataDir, webhook: { port: 0 }, admin: { enabled: false }, sync: { pollIntervalMs: 100, baselineSettleSeconds: 0 } });
    await withChildAgent(config, async (agent) => {
      const shown = cli(config, ['secrets', 'show', 'webhook.bearerToken']);
      assert.equal(shown.status, 0, shown.out);
      const token = shown.stdout.trim();
      assert.match(token, /^[A-Za-z0-9_-]{43}$/);
      assert.match(cli(config, ['audit', '--limit', '1']).stdout, /\(command line\): Showed the webhook token \(to give head office\)\./, 'showing it is recorded');
      const secrets = path.join(dataDir, 'secrets.json');
      assert.equal(fs.statSync(secrets).mode & 0o777, 0o600, 'kept owner-only with the other secrets');
      assert.match(cli(config, ['secrets', 'list']).out, /webhook\.bearerToken\s+set \(secrets file\)/);

      assert.equal((await post(agent.url, update(7, 10, 0, MENU), token)).status, 200, 'head office, with the token');
      // The attack: nobody posts ChangeSequence 900000000000 with the current parent, without a token.
      assert.equal(postAsNobody(agent.url, update(7, 900000000000, 10, MENU)), 401);
      assert.equal(postAsNobody(agent.url, update(7, 900000000000, 10, MENU), 'a-guessed-token'), 401);
      // Head office's next real update is applied, not stale.
      assert.equal((await post(agent.url, update(7, 11, 10, MENU), token)).status, 200);
      const applied = (): number | null => {
        const locations = (JSON.parse(cli(config, ['status', '--json']).stdout) as { locations: { locationId: number; lastChangeSequence: number | null }[] }).locations;
        return locations.find((l) => l.locationId === 7)?.lastChangeSequence ?? null;
      };
      for (let i = 0; i < 100 && applied() !== 11; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(applied(), 11);
    });
    // The next start keeps the same token.
    await withChildAgent(config, async () => {
      assert.equal(cli(config, ['secrets', 'show', 'webhook.bearerToken']).stdout.trim().length, 43);
    });
  });

  it('the dev publisher sends the local agent\'s token by itself', async () => {
    const dir = tempDir();
    const config = writeRawConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { enabled: false }, sync: { pollIntervalMs: 100, baselineSettleSeconds: 0 } });
    await withChildAgent(config, async (agent) => {
      const r = cli(config, ['dev', 'publisher', '--url', agent.url, '--locations', '1', '--updates', '3', '--items', '5', '--seed', '4', '--json']);
      assert.equal(r.status, 0, r.out);
      const summary = JSON.parse(r.stdout) as { acked: number; deliveries: number; statusCounts: Record<string, number> };
      assert.equal(summary.acked, summary.deliveries);
      assert.equal(summary.statusCounts['401'], undefined);
    });
  });

  it('an earlier version\'s folder with no token does not start until the site chooses; either way works', async () => {
    const dir = tempDir();
    const dataDir = path.join(dir, 'data');
    const base = { dataDir, webhook: { port: 0 }, admin: { enabled: false }, sync: { pollIntervalMs: 100, baselineSettleSeconds: 0 } };
    // A 0.2 site: it ran, and head office sent without a token.
    const explicit = writeRawConfig(dir, { ...base, webhook: { port: 0, allowUnauthenticated: true } });
    await withChildAgent(explicit, async (agent) => assert.equal((await post(agent.url, update(7, 10, 0, MENU))).status, 200));
    const untouched = writeRawConfig(dir, base);
    const refused = cli(untouched, ['serve']);
    assert.equal(refused.status, 3, refused.out);
    assert.match(refused.out, /webhook\.bearerToken: the webhook has no bearer token, and this data folder \(.*\) has taken updates from head office without one before/);
    assert.match(refused.out, /pos-sync-agent secrets generate webhook\.bearerToken --config/);
    assert.match(refused.out, /set webhook\.allowUnauthenticated to true/);
    assert.equal(cli(untouched, ['secrets', 'show', 'webhook.bearerToken']).status, 1, 'no token was made behind the site\'s back');
    // The site chooses a token.
    const made = cli(untouched, ['secrets', 'generate', 'webhook.bearerToken']);
    assert.equal(made.status, 0, made.out);
    const token = cli(untouched, ['secrets', 'show', 'webhook.bearerToken']).stdout.trim();
    await withChildAgent(untouched, async (agent) => {
      assert.equal((await post(agent.url, update(7, 11, 10, MENU))).status, 401);
      assert.equal((await post(agent.url, update(7, 11, 10, MENU), token)).status, 200);
    });
  });

  it('updates a far-ahead ChangeSequence made stale are shown in status and the window, with what to do', async () => {
    const dir = tempDir();
    // A site that allows calls without a token (its explicit choice): the far-ahead update gets in.
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { enabled: false }, sync: { pollIntervalMs: 100, baselineSettleSeconds: 0 } });
    await withChildAgent(config, async (agent) => {
      assert.equal((await post(agent.url, update(7, 10, 0, MENU))).status, 200);
      assert.equal(postAsNobody(agent.url, update(7, 900000000000, 10, MENU)), 200);
      const locationOf = (): LocationStatus | undefined => (JSON.parse(cli(config, ['status', '--json']).stdout) as { locations: LocationStatus[] }).locations.find((l) => l.locationId === 7);
      for (let i = 0; i < 100 && locationOf()?.lastChangeSequence !== 900000000000; i++) await new Promise((r) => setTimeout(r, 100));
      // Head office's next real updates: answered 200 stored, then set aside.
      assert.equal((await post(agent.url, update(7, 11, 10, MENU))).status, 200);
      assert.equal((await post(agent.url, update(7, 12, 11, MENU))).status, 200);
      for (let i = 0; i < 100 && (locationOf()?.staleSinceApplied?.count ?? 0) < 2; i++) await new Promise((r) => setTimeout(r, 100));
      const location = locationOf()!;
      assert.deepEqual(location.staleSinceApplied, { count: 2, latest: [12, 11] });
      const text = cli(config, ['status']).out;
      assert.match(text, /STALE: 2 updates received after ChangeSequence 900000000000 was applied were set aside as stale \(ChangeSequence 12, 11\)/);
      assert.match(text, /restore the backup taken before .*pos-sync-agent backup list, then pos-sync-agent restore FILE/);
      // The window's summary of that location (the same function the renderer bundles): red, with the same advice.
      const severity = assessSeverity({ now: new Date(), reachable: true, paused: false, locations: [location], gapAlertMinutes: 30 }, (iso: string) => iso);
      const summary = severity.locations[0]!;
      assert.equal(summary.light, 'red');
      assert.equal(severity.light, 'red');
      assert.ok(summary.lines.some((l: string) => l.startsWith('2 updates received after ChangeSequence 900000000000 was applied')), summary.lines.join('\n'));
    });
  });
});
