import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { OFFLINE_PAGE_POLICY, offlinePageHtml, offlinePageUrl, type OfflineReason } from '../../../src/electron/offline-page';

/** The desktop window's local page, shown instead of any plain address of the window's port (offline-page.ts). */

const REASONS: OfflineReason[] = [
  { kind: 'own-restarting' },
  { kind: 'own-gave-up', detail: 'the agent stopped 5 times in a row' },
  { kind: 'service-not-running', detail: 'connect ENOENT /run/pos-sync-agent/control.sock' },
  { kind: 'service-not-running' },
  { kind: 'service-refused', hint: 'To see its status and log in, start POS Sync Agent with "Run as administrator".' },
  { kind: 'session-not-cleared' },
];

describe('the local page', () => {
  it('is a data: URL of the page, loaded from nothing but itself', () => {
    for (const reason of REASONS) {
      const url = offlinePageUrl(reason, 'linux');
      assert.match(url, /^data:text\/html;charset=utf-8;base64,/);
      assert.equal(Buffer.from(url.split(',')[1]!, 'base64').toString('utf8'), offlinePageHtml(reason, 'linux'));
    }
  });

  it('has a strict policy: nothing but its own inline style, whose hash it names; no script, link, form or image', () => {
    assert.match(OFFLINE_PAGE_POLICY, /^default-src 'none'; /);
    assert.match(OFFLINE_PAGE_POLICY, /base-uri 'none'/);
    assert.match(OFFLINE_PAGE_POLICY, /form-action 'none'/);
    assert.doesNotMatch(OFFLINE_PAGE_POLICY, /unsafe|script-src|\*/);
    for (const reason of REASONS) {
      const html = offlinePageHtml(reason, 'win32');
      assert.ok(html.includes(`<meta http-equiv="Content-Security-Policy" content="${OFFLINE_PAGE_POLICY}">`));
      // The policy comes before anything it governs.
      assert.ok(html.indexOf('Content-Security-Policy') < html.indexOf('<style>'));
      assert.doesNotMatch(html, /<script|<a |<form|<img|<iframe|<link|<base|https?:\/\//i);
      const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? '';
      assert.ok(OFFLINE_PAGE_POLICY.includes(`'sha256-${crypto.createHash('sha256').update(style).digest('base64')}'`));
    }
  });

  it('says the agent is not running and what to do: the tray, the service, `pos-sync-agent status`', () => {
    assert.match(offlinePageHtml({ kind: 'own-restarting' }), /not running[\s\S]*being started again/);
    assert.match(offlinePageHtml({ kind: 'own-gave-up' }), /Start the agent again/);
    const win = offlinePageHtml({ kind: 'service-not-running' }, 'win32');
    assert.match(win, /not running/);
    assert.match(win, /services\.msc/);
    assert.match(win, /pos-sync-agent status/);
    const linux = offlinePageHtml({ kind: 'service-not-running' }, 'linux');
    assert.match(linux, /sudo systemctl start pos-sync-agent/);
    assert.match(linux, /pos-sync-agent status/);
    assert.match(linux, /again by itself/);
    assert.match(offlinePageHtml({ kind: 'service-refused', hint: 'Run as administrator, please' }), /Run as administrator, please/);
  });

  it('escapes every text that does not come from the page itself', () => {
    const html = offlinePageHtml({ kind: 'service-not-running', detail: '<script>alert(1)</script><img src=x onerror=alert(2)>"\'&' }, 'linux');
    assert.doesNotMatch(html, /<script|<img/);
    assert.match(html, /&#60;script&#62;alert\(1\)&#60;\/script&#62;/);
    const refused = offlinePageHtml({ kind: 'service-refused', hint: '<b>"x"</b>' }, 'linux');
    assert.doesNotMatch(refused, /<b>/);
  });
});
