import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkChange,
  checkHostHeader,
  checkToken,
  cookieName,
  csrfTokenFor,
  isChange,
  isLoopbackBindAddress,
  newToken,
  ownOrigins,
  readCookie,
  sameSecret,
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
  it('reads our cookie among others', () => {
    assert.equal(readCookie('a=1; pos_admin_8780=tok%3D; b=2', 'pos_admin_8780'), 'tok=');
    assert.equal(readCookie('pos_admin_87800=x', 'pos_admin_8780'), null);
    assert.equal(readCookie(undefined, 'x'), null);
    assert.equal(readCookie('x=%E0%A4%A', 'x'), null);
  });
  it('checkToken accepts the cookie or a bearer header, nothing else', () => {
    const token = newToken();
    assert.equal(checkToken({ cookie: `${cookieName(1234)}=${token}`, authorization: undefined }, 1234, token).ok, true);
    assert.equal(checkToken({ cookie: undefined, authorization: `Bearer ${token}` }, 1234, token).ok, true);
    const cases = [
      { cookie: undefined, authorization: undefined },
      { cookie: `${cookieName(1235)}=${token}`, authorization: undefined },
      { cookie: `${cookieName(1234)}=${token}x`, authorization: undefined },
      { cookie: undefined, authorization: `Basic ${token}` },
      { cookie: undefined, authorization: `Bearer ${token.slice(1)}` },
      { cookie: undefined, authorization: `Bearer` },
    ];
    for (const c of cases) {
      const d = checkToken(c, 1234, token);
      assert.equal(d.ok, false, JSON.stringify(c));
      if (!d.ok) assert.equal(d.status, 401);
    }
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
