import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import https from 'node:https';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Redactor } from '../../src/log';
import { startTestAgent } from '../helpers/agent';
import { item, price, sampleBodies, tempDir, update } from '../helpers/fixtures';
import { needs } from '../helpers/system';

function selfSignedCertificate(dir: string): { certFile: string; keyFile: string } {
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], { stdio: 'ignore' });
  return { certFile, keyFile };
}

describe('direct HTTPS', () => {
  it('serves the receiver over TLS when webhook.tls is set', needs('openssl'), async () => {
    const dir = tempDir();
    const tls = selfSignedCertificate(dir);
    const t = await startTestAgent({ webhook: { tls } });
    assert.match(t.webhookUrl, /^https:\/\/127\.0\.0\.1:\d+\/webhooks\/menu-cycles$/);
    const ca = (await import('node:fs')).readFileSync(tls.certFile);
    const body = sampleBodies()[0]!.raw;
    const status = await new Promise<number>((resolve, reject) => {
      const req = https.request(t.webhookUrl, { method: 'POST', ca, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(body);
    });
    assert.equal(status, 200);
    await t.settle();
    assert.equal(t.agent.core.status()[0]!.lastChangeSequence, 1041);
  });
});

describe('the POS contract', () => {
  it('looks up by (location, PLU, date) and by tax code through indexes, not table scans', async () => {
    const t = await startTestAgent();
    await t.post(update(1, 2, 1, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 1)])]));
    await t.settle();
    const plan = (sql: string): string =>
      (t.agent.core.tillDb.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join(' | ');
    const byPlu = plan("SELECT * FROM pos_prices WHERE location_id = 1 AND plu = '1' AND '2026-12-05' BETWEEN date_from AND date_to");
    assert.match(byPlu, /USING (COVERING )?INDEX items_plu/);
    assert.match(byPlu, /USING INDEX price_ranges_item_end \(location_id=\? AND item_id=\? AND date_to>\?\)/);
    assert.ok(!/SCAN (p|price_ranges)\b/.test(byPlu), byPlu);
    const availability = plan("SELECT * FROM pos_availability_today WHERE location_id = 1 AND plu = '1'");
    assert.match(availability, /USING INDEX availability_ranges_item_end \(location_id=\? AND item_id=\? AND date_to>\?\)/);
    // By tax code: each item once (the views start from items), then its ranges by key. Before till
    // migration 005 SQLite searched an index by (tax_code, location_id) for every item, reading the
    // location's ranges with that tax code once per item.
    const byTax = plan("SELECT * FROM pos_prices WHERE tax_code = 'Z'");
    assert.match(byTax, /SEARCH p USING INDEX price_ranges_item_end \(location_id=\? AND item_id=\?\)/);
    assert.ok(!/SCAN (p|price_ranges)\b/.test(byTax), byTax);
    const byTaxToday = plan("SELECT * FROM pos_prices_today WHERE tax_code = 'Z'");
    assert.match(byTaxToday, /SEARCH p USING INDEX price_ranges_item_end \(location_id=\? AND item_id=\? AND date_to>\?\)/);
  });

  it('stores a location that is not in the config but applies it only when the site accepts others, with the default timezone', async () => {
    const closed = await startTestAgent({ locations: { '3021': { timezone: 'Europe/Dublin' } }, defaultTimezone: 'Europe/Jersey' });
    assert.equal((await closed.post(update(999, 2, 1, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 1)])]))).status, 200);
    await closed.settle();
    const held = closed.agent.core.status()[0]!;
    assert.deepEqual([held.lastChangeSequence, held.siteRole, held.waiting.map((w) => w.reason)], [null, 'other', ['not-for-site']]);
    const t = await startTestAgent({ locations: { '3021': { timezone: 'Europe/Dublin' } }, defaultTimezone: 'Europe/Jersey', sync: { acceptOtherLocations: true } });
    assert.equal((await t.post(update(999, 2, 1, [item('1', 'A', [price('2026-12-01', '2026-12-31', 'Eat In', 1)])]))).status, 200);
    await t.settle();
    assert.equal(t.agent.core.status()[0]!.lastChangeSequence, 2);
    assert.equal(t.agent.core.timezoneFor(999), 'Europe/Jersey');
    assert.equal(t.agent.core.timezoneFor(3021), 'Europe/Dublin');
  });
});

describe('log redaction', () => {
  it('removes registered secrets and credential-looking values, and leaves ordinary words alone', () => {
    const r = new Redactor();
    r.add('tok-3f9a-secret', null, undefined, 'abc'); // too short to register safely: 'abc'
    assert.equal(r.redact('sent tok-3f9a-secret twice: tok-3f9a-secret'), 'sent ******** twice: ********');
    assert.equal(r.redact('Authorization: Bearer eyJhbGciOiJIUzI1NiJ9'), 'Authorization: Bearer ********');
    assert.equal(r.redact('header Basic dXNlcjpwYXNzd29yZA=='), 'header Basic ********');
    assert.equal(r.redact('{"password":"hunter22","token":null}'), '{"password":"********","token":null}');
    assert.equal(r.redact('calls need no Authorization header; abc stays'), 'calls need no Authorization header; abc stays');
  });
});
