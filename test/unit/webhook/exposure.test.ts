import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigSchema, type Config } from '../../../src/config/schema';
import { silentLogger } from '../../../src/log';
import { EXPOSURE_ALERT, ExposureService, LOCAL_OPEN_ALERT } from '../../../src/ops/exposure';
import { webhookExposure, webhookExposureProblems } from '../../../src/webhook/exposure';
import { isBrowserRequest, sentByBrowserFetch } from '../../../src/webhook/auth';

/** Issue 10, point 1: who may reach the webhook, as the README's decision table. */

function config(webhook: Record<string, unknown>, tunnel: Record<string, unknown> | null = null): Config {
  return ConfigSchema.parse({ dataDir: '/tmp/unused', webhook, ...(tunnel ? { tunnel } : {}) });
}

const TLS = { certFile: 'c.pem', keyFile: 'k.pem' };
const TUNNEL = { command: '/usr/bin/cloudflared', args: ['tunnel', 'run'], publicUrl: 'https://menus.site.example' };

describe('webhook exposure decision table', () => {
  const rows: [string, Config, { outside: boolean; refused: boolean; red: boolean | 'local' }][] = [
    ['untouched install (loopback, no token)', config({}), { outside: false, refused: false, red: false }],
    ['loopback with a token', config({ bearerToken: 'abcdefghijklmnop' }), { outside: false, refused: false, red: false }],
    ['loopback, no token, explicit opt-out (issue 24: every account on the PC may post)', config({ allowUnauthenticated: true }), { outside: false, refused: false, red: 'local' }],
    ['another loopback address', config({ host: '127.0.0.2' }), { outside: false, refused: false, red: false }],
    ['all interfaces, no token', config({ host: '0.0.0.0' }), { outside: true, refused: true, red: false }],
    ['a LAN address with a token', config({ host: '192.168.1.20', bearerToken: 'abcdefghijklmnop' }), { outside: true, refused: false, red: false }],
    ['TLS, no token', config({ tls: TLS }), { outside: true, refused: true, red: false }],
    ['TLS, no token, explicit opt-out', config({ tls: TLS, allowUnauthenticated: true }), { outside: true, refused: false, red: true }],
    ['TLS with a token and the opt-out (the token wins)', config({ tls: TLS, bearerToken: 'abcdefghijklmnop', allowUnauthenticated: true }), { outside: true, refused: false, red: false }],
  ];
  for (const [name, c, want] of rows) {
    it(name, () => {
      const e = webhookExposure(c);
      assert.equal(e.reachableFromOutside, want.outside);
      const problems = webhookExposureProblems(c);
      assert.equal(problems.length > 0, want.refused);
      if (want.refused) {
        assert.equal(problems[0]!.field, 'webhook.bearerToken');
        assert.match(problems[0]!.message, /anyone who finds its address could change your prices/);
        assert.match(problems[0]!.message, /webhook\.allowUnauthenticated/);
      }
      assert.deepEqual(new ExposureService(c, silentLogger).adminAlerts(), want.red === 'local' ? [LOCAL_OPEN_ALERT] : want.red ? [EXPOSURE_ALERT] : []);
    });
  }

  it('a tunnel makes the webhook reachable from outside, and says so', () => {
    const tunnelled = config({}, TUNNEL);
    const e = webhookExposure(tunnelled);
    assert.equal(e.reachableFromOutside, true);
    assert.deepEqual(e.because, ['a tunnel is configured']);
    assert.equal(webhookExposureProblems(tunnelled).length, 1);
  });

  it('the red alert says what anyone can do', () => {
    assert.equal(EXPOSURE_ALERT.light, 'red');
    assert.match(EXPOSURE_ALERT.title, /Anyone who finds this address can change your prices/);
  });
});

describe('requests a browser made', () => {
  it('fetch metadata only browsers send; Node fetch (sec-fetch-mode alone) is a server', () => {
    assert.equal(sentByBrowserFetch({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'empty' }), true);
    assert.equal(sentByBrowserFetch({ 'sec-fetch-dest': 'document' }), true);
    assert.equal(sentByBrowserFetch({ 'sec-fetch-mode': 'cors' }), false, 'undici sends this on every request');
    assert.equal(sentByBrowserFetch({}), false);
  });

  it("an Origin that is a page's is a browser's, the spec's bare DNS name is head office's", () => {
    const cases: [string | undefined, string | null, boolean][] = [
      [undefined, null, false],
      ['menus.example.com', null, false],
      ['menus.example.com', 'menus.example.com', false],
      ['null', null, true],
      ['http://127.0.0.1:5173', null, true],
      ['https://evil.example.com', 'menus.example.com', true],
      ['https://menus.example.com', 'menus.example.com', false],
      ['HTTPS://MENUS.EXAMPLE.COM', 'menus.example.com', false],
      ['chrome-extension://abcdef', null, true],
    ];
    for (const [origin, expected, browser] of cases) assert.equal(isBrowserRequest({ origin, secFetch: false }, expected), browser, `${origin} / ${expected}`);
    assert.equal(isBrowserRequest({ origin: 'menus.example.com', secFetch: true }, 'menus.example.com'), true, 'fetch metadata decides alone');
  });
});
