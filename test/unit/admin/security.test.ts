import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkChange,
  checkHostHeader,
  checkCredentials,
  mintLoginCode,
  mintSession,
  verifyLoginCode,
  csrfTokenFor,
  isChange,
  isLoopbackBindAddress,
  newStartKey,
  newToken,
  ownOrigins,
  sameSecret,
  signingKey,
} from '../../../src/admin/security';

describe('checkHostHeader', () => {
  it('accepts loopback names with our port only', () => {
    for (const h of ['127.0.0.1:8780', 'localhost:8780', 'LocalHost:8780', '[::1]:8780', ' 127.0.0.1:8780 ']) assert.equal(checkHostHeader(h, 8780).ok, true, h);
  });
  it('refuses everything else', () => {
    for (const h of [undefined, '', 'evil.example:8780', 'evil.example', '127.0.0.1', '127.0.0.1:8781', 'localhost:80', '127.0.0.2:8780', '127.0.0.1.evil.example:8780', 'localhost.:8780', '[::2]:8780', '[::1]', 'user@127.0.0.1:8780', '127.0.0.1:8780:1', '0.0.0.0:8780', '2130706433:8780', '127.1:8780']) {
      const d = checkHostHeader(h, 8780);
      assert.equal(d.ok, false, String(h));
      if (!d.ok) assert.equal(d.status, 421);
    }
  });
});

describe('tokens', () => {
  it('makes long URL-safe random tokens', () => {
    const a = newToken();
    const b = newToken();
    assert.notEqual(a, b);
    assert.match(a, /^[A-Za-z0-9_-]{43}$/);
  });
  it('compares secrets exactly', () => {
    assert.equal(sameSecret('abc', 'abc'), true);
    assert.equal(sameSecret('abc', 'abd'), false);
    assert.equal(sameSecret('abc', 'abcd'), false);
    assert.equal(sameSecret('', 'a'), false);
  });
  it('checkCredentials accepts the window\'s Session header or the bearer token, and no cookie at all (issue 24)', () => {
    const token = newToken();
    const keys = { token, signing: signingKey(token, newStartKey()) };
    const now = new Date('2026-11-22T12:00:00Z');
    const session = mintSession(keys.signing, now, 12).value;
    assert.equal(checkCredentials({ authorization: `Session ${session}` }, keys, now, 12).ok, true);
    assert.equal(checkCredentials({ authorization: `Bearer ${token}` }, keys, now, 12).ok, true);
    const cases = [
      { authorization: undefined },
      { authorization: `Session ${session}x` },
      { authorization: `Session ${mintSession(newToken(), now, 12).value}` },
      // Signed with the token alone, or by an earlier start of the server (another start key).
      { authorization: `Session ${mintSession(token, now, 12).value}` },
      { authorization: `Session ${mintSession(signingKey(token, newStartKey()), now, 12).value}` },
      { authorization: `Bearer ${keys.signing}` },
      // The admin token is for scripts as a bearer token, not a session value.
      { authorization: `Session ${token}` },
      { authorization: `Bearer ${session}` },
      { authorization: `Basic ${token}` },
      { authorization: `Bearer ${token.slice(1)}` },
      { authorization: `Bearer` },
    ];
    for (const c of cases) {
      const d = checkCredentials(c, keys, now, 12);
      assert.equal(d.ok, false, JSON.stringify(c));
      if (!d.ok) assert.equal(d.status, 401);
    }
  });

  it('a session lasts sessionHours after its last renewal, and is renewed once it is a minute old and used', () => {
    const token = newToken();
    const startKey = newStartKey();
    const keys = { token, signing: signingKey(token, startKey) };
    const t0 = new Date('2026-11-22T12:00:00Z');
    const authorization = `Session ${mintSession(keys.signing, t0, 12).value}`;
    const at = (ms: number): Date => new Date(t0.getTime() + ms);
    const fresh = checkCredentials({ authorization, used: '1' }, keys, at(30_000), 12);
    assert.deepEqual([fresh.ok, fresh.ok && fresh.renew], [true, false]);
    const older = checkCredentials({ authorization, used: '1' }, keys, at(120_000), 12);
    assert.deepEqual([older.ok, older.ok && older.renew], [true, true]);
    // The window's own polls say nothing of a person: they never renew it, so one left alone ends.
    for (const used of [undefined, '', '0', 'true']) {
      const polled = checkCredentials({ authorization, used }, keys, at(120_000), 12);
      assert.deepEqual([polled.ok, polled.ok && polled.renew], [true, false], String(used));
    }
    const ended = checkCredentials({ authorization }, keys, at(12 * 3_600_000 + 1000), 12);
    assert.equal(ended.ok, false);
    if (!ended.ok) assert.equal(ended.id, 'admin_session_expired');
    // A rotated token ends it at once, and so does the next start of the server.
    const rotated = newToken();
    assert.equal(checkCredentials({ authorization }, { token: rotated, signing: signingKey(rotated, startKey) }, at(1000), 12).ok, false);
    assert.equal(checkCredentials({ authorization }, { token, signing: signingKey(token, newStartKey()) }, at(1000), 12).ok, false);
  });

  it('a session shorter than ten minutes is renewed once a tenth of it has passed', () => {
    const token = newToken();
    const keys = { token, signing: signingKey(token, newStartKey()) };
    const t0 = new Date('2026-11-22T12:00:00Z');
    // admin.sessionHours at its least: 36 seconds, which a minute's wait could never renew.
    const authorization = `Session ${mintSession(keys.signing, t0, 0.01).value}`;
    const at = (ms: number): Date => new Date(t0.getTime() + ms);
    const early = checkCredentials({ authorization, used: '1' }, keys, at(2_000), 0.01);
    assert.deepEqual([early.ok, early.ok && early.renew], [true, false]);
    const later = checkCredentials({ authorization, used: '1' }, keys, at(5_000), 0.01);
    assert.deepEqual([later.ok, later.ok && later.renew], [true, true]);
  });

  it('a login code is signed with the token, expires, and never contains the token', () => {
    const token = newToken();
    const now = new Date('2026-11-22T12:00:00Z');
    const { code, expiresAt } = mintLoginCode(token, now, 15);
    assert.ok(!code.includes(token));
    assert.equal(expiresAt.toISOString(), '2026-11-22T12:15:00.000Z');
    const ok = verifyLoginCode(code, token, new Date(now.getTime() + 14 * 60_000));
    assert.equal(ok.ok, true);
    assert.deepEqual(verifyLoginCode(code, token, new Date(now.getTime() + 15 * 60_000)), { ok: false, reason: 'expired' });
    assert.deepEqual(verifyLoginCode(code, newToken(), now), { ok: false, reason: 'invalid' });
    assert.equal(verifyLoginCode(`${code.slice(0, -1)}${code.endsWith('A') ? 'B' : 'A'}`, token, now).ok, false, 'a changed signature');
    const [exp, nonce, sig] = code.split('.') as [string, string, string];
    assert.deepEqual(verifyLoginCode(`${Number(exp) + 3600}.${nonce}.${sig}`, token, now), { ok: false, reason: 'invalid' }, 'the expiry cannot be extended');
    assert.deepEqual(verifyLoginCode(token, token, now), { ok: false, reason: 'invalid' }, 'the token itself is not a login code');
    // A code of one start of the server is not valid for the next (security.ts, signingKey).
    const startKey = newStartKey();
    const issued = mintLoginCode(signingKey(token, startKey), now, 15).code;
    assert.equal(verifyLoginCode(issued, signingKey(token, startKey), now).ok, true);
    assert.deepEqual(verifyLoginCode(issued, signingKey(token, newStartKey()), now), { ok: false, reason: 'invalid' });
    assert.deepEqual(verifyLoginCode(issued, token, now), { ok: false, reason: 'invalid' });
  });
});

describe('checkChange (CSRF)', () => {
  const token = newToken();
  const csrf = csrfTokenFor(token);
  const origins = ownOrigins(8780);
  it('lets reads through without a header', () => {
    for (const m of ['GET', 'HEAD', 'OPTIONS', 'get']) assert.equal(checkChange({ method: m, csrfHeader: undefined, origin: undefined, secFetchSite: undefined }, origins, csrf).ok, true);
    assert.equal(isChange('POST'), true);
    assert.equal(isChange('DELETE'), true);
  });
  it('needs the right header for every change', () => {
    for (const m of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      assert.equal(checkChange({ method: m, csrfHeader: csrf, origin: 'http://127.0.0.1:8780', secFetchSite: 'same-origin' }, origins, csrf).ok, true);
      assert.equal(checkChange({ method: m, csrfHeader: csrf, origin: undefined, secFetchSite: undefined }, origins, csrf).ok, true);
      const missing = checkChange({ method: m, csrfHeader: undefined, origin: undefined, secFetchSite: undefined }, origins, csrf);
      assert.deepEqual(missing.ok ? null : missing.id, 'csrf_header_required');
      const wrong = checkChange({ method: m, csrfHeader: token, origin: undefined, secFetchSite: undefined }, origins, csrf);
      assert.deepEqual(wrong.ok ? null : wrong.id, 'csrf_header_invalid');
    }
  });
  it('refuses other origins and cross-site fetches even with the header', () => {
    for (const origin of ['http://evil.example', 'http://127.0.0.1:8781', 'https://127.0.0.1:8780', 'null']) {
      assert.equal(checkChange({ method: 'POST', csrfHeader: csrf, origin, secFetchSite: undefined }, origins, csrf).ok, false, origin);
    }
    for (const site of ['cross-site', 'same-site']) {
      assert.equal(checkChange({ method: 'POST', csrfHeader: csrf, origin: undefined, secFetchSite: site }, origins, csrf).ok, false, site);
    }
  });
  it('derives a different CSRF value per token', () => {
    assert.notEqual(csrfTokenFor(newToken()), csrfTokenFor(newToken()));
    assert.notEqual(csrf, token);
  });
});

describe('isLoopbackBindAddress', () => {
  it('accepts only loopback addresses', () => {
    for (const a of ['127.0.0.1', '127.0.0.2', '::1']) assert.equal(isLoopbackBindAddress(a), true, a);
    for (const a of ['0.0.0.0', '::', '', 'localhost', '10.0.0.1', '::ffff:127.0.0.1', '128.0.0.1']) assert.equal(isLoopbackBindAddress(a), false, a);
  });
});
