import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CLEARED_STORAGES, NO_WORKERS_POLICY, WINDOW_PARTITION, requestDecision, responseHeadersDecision } from '../../../src/electron/window-session';

/**
 * The status window's session (window-session.ts): another account that listened on the window's port
 * while the agent was stopped must not leave a service worker or a cached app.js that runs when the
 * next login link loads.
 */

const ORIGIN = 'http://127.83.4.201:8780';
const NEXT = 'http://127.9.200.17:8780';

describe('the window session', () => {
  it('is an in-memory partition of its own, not the persistent default session', () => {
    assert.ok(WINDOW_PARTITION.length > 0);
    assert.doesNotMatch(WINDOW_PARTITION, /^persist:/);
  });

  it('clears service workers and cache storage before each load, with the rest a page can store', () => {
    for (const storage of ['serviceworkers', 'cachestorage', 'cookies', 'localstorage', 'indexdb'] as const) assert.ok(CLEARED_STORAGES.includes(storage), storage);
    // Not the GPU shader cache: no page puts anything there.
    assert.ok(!(CLEARED_STORAGES as readonly string[]).includes('shadercache'));
  });
});

describe('requestDecision', () => {
  it('refuses every service worker script fetch, whatever the case of the header or its value, on any origin', () => {
    const cases: Record<string, string | string[]>[] = [{ 'Service-Worker': 'script' }, { 'service-worker': 'script' }, { 'SERVICE-WORKER': 'Script' }, { 'Service-Worker': '' }, { 'Service-Worker': ['script'] }];
    for (const headers of cases) {
      assert.deepEqual(requestDecision(`${ORIGIN}/sw.js`, headers, ORIGIN), { cancel: true, why: 'service-worker' }, JSON.stringify(headers));
      assert.deepEqual(requestDecision('http://127.0.0.1:8780/sw.js', headers, ORIGIN), { cancel: true, why: 'service-worker' });
      assert.deepEqual(requestDecision(`${ORIGIN}/sw.js`, headers, null), { cancel: true, why: 'service-worker' });
    }
  });

  it('lets the window\'s own requests through, other headers of that name-prefix included', () => {
    const headers = { Accept: 'text/html', 'Service-Worker-Navigation-Preload': 'true', 'X-Service-Worker': 'script' };
    for (const url of [`${ORIGIN}/?login=abc`, `${ORIGIN}/app.js`, `${ORIGIN}/api/summary`, `${ORIGIN}/api/events`]) assert.deepEqual(requestDecision(url, headers, ORIGIN), { cancel: false }, url);
  });

  it('refuses network requests to any other origin: the old address, the other loopback names, the network', () => {
    for (const url of ['http://127.0.0.1:8780/', 'http://localhost:8780/', 'http://127.83.4.201:8781/', 'https://127.83.4.201:8780/', 'ws://127.83.4.201:8780/', 'http://evil.example/x', 'not a url']) {
      assert.equal(requestDecision(url, {}, ORIGIN).cancel, true, url);
    }
  });

  it('follows a changed origin: the old one is refused once the next link is loaded', () => {
    assert.equal(requestDecision(`${ORIGIN}/api/summary`, {}, NEXT).cancel, true);
    assert.deepEqual(requestDecision(`${NEXT}/?login=abc`, {}, NEXT), { cancel: false });
  });

  it('refuses every network request while the window shows its local page (no origin)', () => {
    assert.deepEqual(requestDecision(`${ORIGIN}/api/summary`, {}, null), { cancel: true, why: 'no-origin' });
  });

  it('leaves what is not a network request (the local data: page, devtools) to the navigation policy', () => {
    assert.deepEqual(requestDecision('data:text/html;base64,PHA+', {}, null), { cancel: false });
    assert.deepEqual(requestDecision('devtools://devtools/bundled/inspector.html', {}, ORIGIN), { cancel: false });
  });
});

describe('responseHeadersDecision', () => {
  it('makes a response of the window\'s origin uncacheable, whatever the server said and in whatever case', () => {
    const out = responseHeadersDecision(`${ORIGIN}/app.js`, { 'cache-control': ['max-age=31536000, immutable'], EXPIRES: ['Thu, 01 Jan 2099 00:00:00 GMT'], Pragma: ['cache'], 'Content-Type': ['text/javascript'] }, ORIGIN);
    assert.ok(out);
    assert.deepEqual(out['Cache-Control'], ['no-store']);
    const names = Object.keys(out).map((k) => k.toLowerCase());
    assert.equal(names.filter((n) => n === 'cache-control').length, 1, 'one Cache-Control, ours');
    assert.ok(!names.includes('expires') && !names.includes('pragma'));
    assert.deepEqual(out['Content-Type'], ['text/javascript']);
  });

  it('adds a policy without workers beside the server\'s own, which it keeps', () => {
    const own = "default-src 'none'; script-src 'self'";
    const out = responseHeadersDecision(`${ORIGIN}/`, { 'content-security-policy': [own], 'X-Frame-Options': 'DENY' }, ORIGIN);
    assert.deepEqual(out?.['content-security-policy'], [own, NO_WORKERS_POLICY]);
    assert.equal(Object.keys(out!).filter((k) => k.toLowerCase() === 'content-security-policy').length, 1);
    assert.deepEqual(out?.['X-Frame-Options'], ['DENY']);
    const bare = responseHeadersDecision(`${ORIGIN}/`, {}, ORIGIN);
    assert.deepEqual(bare, { 'Cache-Control': ['no-store'], 'Content-Security-Policy': [NO_WORKERS_POLICY] });
    assert.deepEqual(responseHeadersDecision(`${ORIGIN}/`, undefined, ORIGIN), bare);
    assert.equal(NO_WORKERS_POLICY, "worker-src 'none'");
  });

  it('leaves other origins, the old one after a change, and everything while no origin is set, untouched', () => {
    const headers = { 'Cache-Control': ['max-age=31536000, immutable'] };
    for (const url of ['http://127.0.0.1:8780/app.js', 'http://localhost:8780/app.js', 'http://127.83.4.201:9999/app.js', 'https://127.83.4.201:8780/app.js', 'not a url']) {
      assert.equal(responseHeadersDecision(url, headers, ORIGIN), null, url);
    }
    assert.equal(responseHeadersDecision(`${ORIGIN}/app.js`, headers, NEXT), null);
    assert.deepEqual(responseHeadersDecision(`${NEXT}/app.js`, headers, NEXT)?.['Cache-Control'], ['no-store']);
    assert.equal(responseHeadersDecision(`${ORIGIN}/app.js`, headers, null), null);
  });

  it('does not change the headers it was given', () => {
    const headers = { 'Content-Security-Policy': ["default-src 'none'"], 'Cache-Control': ['max-age=60'] };
    const before = JSON.stringify(headers);
    responseHeadersDecision(`${ORIGIN}/`, headers, ORIGIN);
    assert.equal(JSON.stringify(headers), before);
  });
});
