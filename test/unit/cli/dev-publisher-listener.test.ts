import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reachesListener } from '../../../src/cli/commands/dev-publisher';

/**
 * Which URLs `dev publisher` takes for the running agent's own listener, the only one it sends the
 * data folder's webhook token to (test/integration/ops/dev-publisher-token.test.ts runs it for real).
 */
describe('dev publisher: a URL that reaches the agent\'s listener', () => {
  const reaches = (target: string, listening: string): boolean => reachesListener(new URL(target), new URL(listening));

  it('the address, port and scheme the agent listens on, whatever the path', () => {
    assert.equal(reaches('http://127.0.0.1:8787/webhooks/menu-cycles', 'http://127.0.0.1:8787/webhooks/menu-cycles'), true);
    assert.equal(reaches('http://127.0.0.1:8787/other', 'http://127.0.0.1:8787/webhooks/menu-cycles'), true);
    assert.equal(reaches('https://[::1]:8443/w', 'https://[::1]:8443/w'), true);
    assert.equal(reaches('http://127.0.0.1/w', 'http://127.0.0.1:80/w'), true, 'the default port written or not');
  });

  it('not another port, scheme or loopback address, nor a host name that may resolve to one', () => {
    assert.equal(reaches('http://127.0.0.1:8788/w', 'http://127.0.0.1:8787/w'), false);
    assert.equal(reaches('http://127.0.0.1:8787/w', 'https://127.0.0.1:8787/w'), false);
    assert.equal(reaches('https://127.0.0.1:8787/w', 'http://127.0.0.1:8787/w'), false);
    assert.equal(reaches('http://127.0.0.2:8787/w', 'http://127.0.0.1:8787/w'), false);
    assert.equal(reaches('http://[::1]:8787/w', 'http://127.0.0.1:8787/w'), false);
    assert.equal(reaches('http://localhost:8787/w', 'http://127.0.0.1:8787/w'), false);
  });

  it('not an agent listening on every address of a family, nor on another machine\'s', () => {
    assert.equal(reaches('http://127.0.0.1:8787/w', 'http://0.0.0.0:8787/w'), false);
    assert.equal(reaches('http://[::1]:8787/w', 'http://[::]:8787/w'), false);
    assert.equal(reaches('http://0.0.0.0:8787/w', 'http://0.0.0.0:8787/w'), false);
    assert.equal(reaches('https://192.168.1.5:8787/w', 'https://192.168.1.5:8787/w'), false);
  });
});
