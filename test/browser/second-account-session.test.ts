import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { startAdminAgent } from '../helpers/admin';
import { launchBrowser } from '../helpers/browser';
import { tempDir } from '../helpers/fixtures';
import { reachableByNobody } from '../helpers/second-user';

/**
 * Issue 24, point 1, in real Chromium: another account on the PC (nobody) runs a server on another
 * loopback port. A page of its own on localhost:Y sends the window's tab to 127.0.0.1:Y, where it
 * records what the browser sends (with a cookie session: `pos_admin_<port>=…`, which worked on the
 * agent's API). Now the tab sends nothing the agent accepts, and nobody's server, given all it saw,
 * is refused by the agent.
 */

/** nobody's server: records each request's headers (one JSON line on stdout), and serves the two pages. */
const ATTACKER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  process.stdout.write(JSON.stringify({ host: req.headers.host, url: req.url, headers: req.headers }) + '\\n');
  if (req.url === '/') {
    res.writeHead(200, { 'content-type': 'text/html' });
    // Sends the tab to the same port on 127.0.0.1, the host the window's origin has.
    res.end('<!doctype html><title>lure</title><script>location.href = "http://127.0.0.1:" + location.port + "/record";</script>');
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html' });
  // Tries the agent's API from its own origin too (with credentials, as a page can).
  res.end('<!doctype html><title>recorded</title><script>fetch("http://127.0.0.1:" + ${'${ADMIN_PORT}'} + "/api/status", { credentials: "include" }).then((r) => { document.title = "status " + r.status; }, () => { document.title = "refused"; });</script>');
});
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
`;

interface Seen {
  host: string;
  url: string;
  headers: Record<string, string | undefined>;
}

async function startAttacker(adminPort: number): Promise<{ port: number; seen: Seen[]; child: ChildProcess }> {
  const dir = tempDir();
  fs.chmodSync(dir, 0o755);
  const script = path.join(dir, 'attacker.cjs');
  fs.writeFileSync(script, ATTACKER.replace('${ADMIN_PORT}', String(adminPort)), { mode: 0o644 });
  fs.chmodSync(script, 0o644);
  const child = spawn('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', reachableByNobody(process.execPath), script], { cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] });
  after(() => {
    child.kill('SIGKILL');
  });
  const seen: Seen[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = JSON.parse(buffer.slice(0, nl)) as { port?: number } & Seen;
        buffer = buffer.slice(nl + 1);
        if (line.port !== undefined) resolve(line.port);
        else seen.push(line);
      }
    });
    child.once('exit', (code) => reject(new Error(`the attacker's server exited ${code}`)));
  });
  return { port, seen, child };
}

describe("another account's server on another loopback port, in Chromium", async () => {
  const t = await startAdminAgent();
  const { page, context } = await launchBrowser();
  const attacker = await startAttacker(t.adminPort);

  it('the window logs in through its link and works', async () => {
    await page.goto(t.loginUrl);
    await page.locator('#summary-label').waitFor();
    assert.equal(new URL(page.url()).search, '', 'the code is out of the address');
  });

  it('nobody\'s page on localhost sends the tab to 127.0.0.1:Y: the browser sends it no session, and the agent takes nothing it saw', async () => {
    await page.goto(`http://localhost:${attacker.port}/`);
    await page.waitForURL(`http://127.0.0.1:${attacker.port}/record`);
    await page.waitForFunction("document.title.startsWith('status') || document.title === 'refused'");
    const recorded = attacker.seen.find((s) => s.url === '/record');
    assert.ok(recorded, 'the attacker\'s server saw the tab');
    const cookie = recorded.headers.cookie ?? '';
    assert.doesNotMatch(cookie, /pos_admin/, `the browser sent ${cookie}`);
    assert.equal(recorded.headers.authorization, undefined);
    // Nor can its page read the agent's API: cross-origin, no CORS, no credential.
    assert.notEqual(await page.title(), 'status 200');
    // Everything the browser sent it, replayed by nobody's server to the agent's API: refused.
    for (const s of attacker.seen) {
      const headers: Record<string, string> = { host: `${t.adminHost}` };
      if (s.headers.cookie) headers.cookie = s.headers.cookie;
      if (s.headers.authorization) headers.authorization = s.headers.authorization;
      const res = await fetch(`${t.adminUrl}api/status`, { headers });
      assert.equal(res.status, 401, `replaying ${JSON.stringify(headers)}`);
    }
    // The browser holds no cookie for this host at all.
    assert.deepEqual((await context.cookies(['http://127.0.0.1', `http://127.0.0.1:${attacker.port}`, `http://localhost:${attacker.port}`])).map((c) => c.name), []);
  });

  it('the session is the window origin\'s alone: the tab coming back to the window is still signed in', async () => {
    await page.goto(t.adminUrl);
    await page.locator('#summary-label').waitFor();
    const stored = await page.evaluate('Object.keys(sessionStorage)');
    assert.deepEqual(stored, ['pos-sync-agent.session']);
    assert.notEqual(await page.locator('#summary-text').innerText(), '');
    assert.equal(await page.locator('text=This window is not signed in').count(), 0);
  });

  it('a used login link opens nothing, and //evil.example/?login=CODE stays on the window\'s origin', async () => {
    const link = t.loginUrl;
    const other = await context.newPage();
    await other.goto(link);
    await other.locator('#summary-label').waitFor();
    const used = await context.newPage();
    await used.goto(link);
    // A locator, not waitForFunction('...'): a string predicate is eval'd again at each poll, which
    // the window's CSP (no 'unsafe-eval') refuses whenever the text is not there at the first look.
    await used.getByText(/already been used/).waitFor();
    const code = new URL(t.loginUrl).searchParams.get('login')!;
    const evil = await context.newPage();
    await evil.goto(`${t.adminOrigin}//evil.example/?login=${code}`);
    assert.equal(new URL(evil.url()).origin, `${t.adminOrigin}`);
    for (const p of [other, used, evil]) await p.close();
  });
});
