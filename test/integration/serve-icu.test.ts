import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { waitFor } from '../../src/dev/child-agent';
import { dateOf, dayOf, encode, generateChains, todayInZone } from '../../src/dev/publisher';
import { ControlClient } from '../../src/cli/control-client';
import { controlEndpoint, SummaryReply } from '../../src/ops/control-protocol';
import { startChildAgent, writeConfig } from '../helpers/child-agent';

/**
 * A running agent builds no ICU formatter, collator or normaliser: each pages ICU's data and code into
 * the process for as long as it runs, a resident cost of every idle agent (issue 29,
 * docs/performance.md). Its timezones come from its own table (src/domain/utc-offsets.ts), its counts
 * and times are written out by hand. The probe records every such call on every thread of a real
 * `serve`, through its start, a first publication's receipt and apply, the clock check, and the
 * severity summary the tray asks for on the control channel.
 */
const PROBE = path.join(__dirname, '..', 'helpers', 'icu-probe.cjs');
const TOKEN = 'serve-icu-webhook-token-0123456789abcdef';

describe('ICU in a running agent', () => {
  it('is not touched from the start through a first apply and the tray\'s summary', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-icu-'));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const calls = path.join(dir, 'icu-calls.txt');
    const dataDir = path.join(dir, 'data');
    const config = writeConfig(dir, { dataDir, webhook: { port: 0, bearerToken: TOKEN }, admin: { port: 0 }, sync: { baselineSettleSeconds: 0 } });
    const agent = await startChildAgent(config, { NODE_OPTIONS: `--require ${JSON.stringify(PROBE)}`, POS_SYNC_ICU_CALLS_FILE: calls, TZ: 'Europe/London' });
    try {
      const today = todayInZone('Europe/London');
      const [chain] = generateChains({ seed: 29, locations: 1, updatesPerLocation: 1, startDate: dateOf(dayOf(today) - 30), days: 365, itemsPerLocation: 20, tariffs: 2, mealPeriods: 2, scheduling: 'all', rangesPerKey: 2 });
      const res = await fetch(agent.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: encode(chain!.updates[0]!) });
      assert.equal(res.status, 200, await res.text());
      const till = path.join(dataDir, 'pos-sync.db');
      await waitFor('the apply', () => {
        if (!fs.existsSync(till)) return false;
        const db = new Database(till, { readonly: true, fileMustExist: true });
        try {
          return (db.prepare('SELECT count(*) AS n FROM price_ranges').get() as { n: number }).n > 0;
        } finally {
          db.close();
        }
      }, 30_000);
      // The tray's summary through the control channel: its severity lines and their times.
      const summary = await new ControlClient(controlEndpoint(dataDir), 'test').request(SummaryReply, { method: 'GET', route: '/summary' });
      assert.ok(summary.light.length > 0);
    } finally {
      await agent.kill('SIGTERM');
    }
    const recorded = fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8') : '';
    assert.equal(recorded, '', `the running agent used ICU:\n${recorded}`);
  });

  it('is seen by the probe when a process does use it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-icu-probe-'));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const calls = path.join(dir, 'icu-calls.txt');
    const r = spawnSync(process.execPath, ['-e', "new Intl.DateTimeFormat('en', { timeZone: 'UTC' }).format(0); (1234).toLocaleString('en-GB')"], {
      env: { ...process.env, NODE_OPTIONS: `--require ${JSON.stringify(PROBE)}`, POS_SYNC_ICU_CALLS_FILE: calls },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const recorded = fs.readFileSync(calls, 'utf8');
    assert.match(recorded, /Intl\.DateTimeFormat/);
    assert.match(recorded, /Number\.prototype\.toLocaleString/);
  });
});
