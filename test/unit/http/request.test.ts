import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { charsetOf, mediaTypeOf, parametersOf } from '../../../src/http/content-type';
import { header, query } from '../../../src/http/request';
import { splitTarget } from '../../../src/http/target';

/** What the routes read of a request (src/http/target.ts, request.ts, content-type.ts), as express read it. */

describe('a request target', () => {
  it('splits the usual target at its first ?', () => {
    assert.deepEqual(splitTarget('/api/status'), { pathname: '/api/status', query: null });
    assert.deepEqual(splitTarget('/api/x?a=1&b=2'), { pathname: '/api/x', query: 'a=1&b=2' });
    assert.deepEqual(splitTarget('/a?b?c'), { pathname: '/a', query: 'b?c' });
    assert.deepEqual(splitTarget('/?'), { pathname: '/', query: '' });
    assert.deepEqual(splitTarget('/a\\b?c\\d'), { pathname: '/a\\b', query: 'c\\d' }, 'backslashes stay on the fast path');
  });

  it('drops the fragment, and reads what url.parse would of an unusual target', () => {
    assert.deepEqual(splitTarget('/app.js#x'), { pathname: '/app.js', query: null });
    assert.deepEqual(splitTarget('/a?q=1#x?y'), { pathname: '/a', query: 'q=1' });
    assert.deepEqual(splitTarget('/a\\b#x'), { pathname: '/a/b', query: null }, 'backslashes before the query become slashes');
    assert.deepEqual(splitTarget('/a\\b?c\\d#x'), { pathname: '/a/b', query: 'c\\d' });
    assert.deepEqual(splitTarget('/app.js\u00a0'), { pathname: '/app.js', query: null }, 'white space at the ends is trimmed');
    assert.deepEqual(splitTarget('http://127.0.0.1:8780/app.js?x=1'), { pathname: '/app.js', query: 'x=1' });
    assert.deepEqual(splitTarget('http://127.0.0.1:8780'), { pathname: '/', query: null });
    assert.deepEqual(splitTarget('http://127.0.0.1:8780?x'), { pathname: '/', query: 'x' });
  });
});

describe('the query', () => {
  it('is flat, decoded, with repeated keys as arrays (querystring.parse, express\'s simple parser)', () => {
    const q = query({ url: '/api/x?q=caf%C3%A9+au+lait&limit=5&limit=6&a[b]=c&empty=&flag' });
    assert.equal(q.q, 'café au lait');
    assert.deepEqual(q.limit, ['5', '6']);
    assert.equal(q['a[b]'], 'c', 'no nested objects');
    assert.equal(q.empty, '');
    assert.equal(q.flag, '');
    assert.equal(q.missing, undefined);
    assert.equal(Object.getPrototypeOf(q), null, 'no inherited keys (q.constructor, q.__proto__)');
    assert.equal(query({ url: '/x?%E0%A4%A=%' }).constructor, undefined);
    assert.deepEqual({ ...query({ url: '/x?%E0%A4%A=%' }) }, { '\ufffd%A': '%' }, 'a bad escape is decoded as far as it goes, never thrown');
    assert.deepEqual({ ...query({ url: '/x' }) }, {});
    assert.deepEqual({ ...query({ url: '/x#q=1' }) }, {});
  });
});

describe('a header', () => {
  it('is read by any name case; a list is joined', () => {
    const req = { headers: { origin: 'http://127.0.0.1:1', 'set-cookie': ['a=1', 'b=2'] } };
    assert.equal(header(req, 'Origin'), 'http://127.0.0.1:1');
    assert.equal(header(req, 'set-cookie'), 'a=1, b=2');
    assert.equal(header(req, 'x-csrf-token'), undefined);
  });
});

describe('a Content-Type', () => {
  it('has a media type only when well formed, in lower case, without parameters or spaces', () => {
    assert.equal(mediaTypeOf('application/json'), 'application/json');
    assert.equal(mediaTypeOf(' Application/JSON ; charset=UTF-8'), 'application/json');
    assert.equal(mediaTypeOf('\tapplication/json\t;'), 'application/json');
    assert.equal(mediaTypeOf('application/vnd.api+json'), 'application/vnd.api+json');
    for (const bad of [undefined, '', ' ', 'json', 'application/json, text/plain', 'application/', '/json', 'a/b/c', 'application json', 'appli(cation/json']) {
      assert.equal(mediaTypeOf(bad), null, String(bad));
    }
  });

  it('has lenient parameters: the first of a name wins, quoted values, no value skipped', () => {
    assert.deepEqual([...parametersOf('text/plain; charset=UTF-8; format=flowed')], [['charset', 'UTF-8'], ['format', 'flowed']]);
    assert.deepEqual([...parametersOf('a/b; Charset = "utf\\"-8" ; x')], [['charset', 'utf"-8']]);
    assert.deepEqual([...parametersOf('a/b;;charset=a;charset=b')], [['charset', 'a']]);
    assert.deepEqual([...parametersOf('a/b; charset="unterminated')], []);
    assert.equal(charsetOf('application/json; charset=UTF-8'), 'utf-8');
    assert.equal(charsetOf('application/json; charset='), '');
    assert.equal(charsetOf('application/json'), undefined);
    assert.equal(charsetOf(undefined), undefined);
    assert.equal(charsetOf('nonsense; charset=latin1'), 'latin1', 'the parameters are read even when the type is malformed');
  });
});
