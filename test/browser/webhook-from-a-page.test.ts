import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { startTestAgent, type RunningTestAgent } from '../helpers/agent';
import { launchBrowser } from '../helpers/browser';
import { item, price, update } from '../helpers/fixtures';

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Issue 10, point 1, tested the way it was found: a page served from another local origin, in real
 * Chromium, POSTs a menu to the webhook with fetch(..., { mode: 'no-cors' }) (no preflight). With the
 * default configuration (no Origin check, no token) the update must not be stored or applied.
 */
describe('a web page cannot change the till', async () => {
  const t: RunningTestAgent = await startTestAgent();
  // launchBrowser registers its own clean-up with the file's `after`: it must be called here, not in a hook.
  const { context } = await launchBrowser();
  const page = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      const form = new URL(req.url ?? '/', 'http://x').searchParams;
      if (form.has('target')) {
        // A classic CSRF: a text/plain form whose one field spells out a JSON body, submitted on load.
        const body = form.get('body') ?? '';
        res.end(
          `<!doctype html><title>form</title><form method="POST" action="${escapeHtml(form.get('target')!)}" enctype="text/plain">` +
            `<input name="${escapeHtml(body.slice(0, -2))}" value="&quot;}"></form><script>document.forms[0].submit()</script>`,
        );
        return;
      }
      res.end('<!doctype html><title>innocent page</title><p>hello</p>');
    });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;

  after(async () => {
    await new Promise((r) => page?.close(r));
  });

  it('no-cors and cors POSTs from another origin are refused; nothing is stored or applied', async () => {
    const tab = await context.newPage();
    await tab.goto(pageUrl);
    const body = JSON.stringify(update(77, 2, 1, [item('1', 'A', [price('2026-01-01', '9999-12-31', 'Eat In', '0.01')])]));
    const results = await tab.evaluate(
      async ({ url, body }) => {
        const out: string[] = [];
        for (const [mode, type] of [['no-cors', 'text/plain'], ['no-cors', 'application/json'], ['cors', 'text/plain']] as const) {
          try {
            const res = await fetch(url, { method: 'POST', mode, body, headers: { 'content-type': type } });
            out.push(`${mode}/${type}: ${res.type} ${res.status}`);
          } catch (err) {
            out.push(`${mode}/${type}: ${(err as Error).message}`);
          }
        }
        return out;
      },
      { url: t.webhookUrl, body },
    );
    // The form page submits itself; the tab ends on the webhook's answer.
    const formPage = `${pageUrl}?target=${encodeURIComponent(t.webhookUrl)}&body=${encodeURIComponent(body)}`;
    await Promise.all([tab.waitForURL(t.webhookUrl), tab.goto(formPage)]);
    assert.match(await tab.content(), /browser_request|web browser/, 'the form post got the refusal');
    assert.equal(results.length, 3);
    // no-cors answers are opaque to the page (status 0); the cors one is a network error or a 403.
    for (const r of results) assert.doesNotMatch(r, / 200$/, r);
    await t.settle();
    const agent = t.agent.core.agentDb;
    assert.equal((agent.prepare('SELECT count(*) AS n FROM inbox').get() as { n: number }).n, 0, `stored: ${results.join('; ')}`);
    assert.equal((t.agent.core.tillDb.prepare('SELECT count(*) AS n FROM price_ranges').get() as { n: number }).n, 0);
    const refused = agent.prepare("SELECT count(*) AS n FROM deliveries").get() as { n: number };
    assert.equal(refused.n, 0, 'refused before the body was read: no delivery row, no quarantine');
    // The same body from a server (no browser headers) is taken: the refusal is about who sent it.
    assert.equal((await t.post(update(77, 1, 0, [item('1', 'A', [price('2026-01-01', '9999-12-31', 'Eat In', '3.00')])]))).status, 200);
  });
});
