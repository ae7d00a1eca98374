import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mayPrintLoginLink } from '../../../src/cli/services';
import { freePort, REPO_ROOT, startChildAgent, writeConfig } from '../../helpers/child-agent';
import { tempDir } from '../../helpers/fixtures';
import { reachableByNobody } from '../../helpers/second-user';

/** Issue 24, point 6: login links work once, across restarts, and never land in a service's journal. */

const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');

/** Trades a link's code for a session value (what the window's script does). */
async function login(link: string): Promise<string> {
  const url = new URL(link);
  const res = await fetch(`${url.origin}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: url.origin }, body: JSON.stringify({ code: url.searchParams.get('login') }) });
  assert.equal(res.status, 200);
  return ((await res.json()) as { session: string }).session;
}

/** A GET of the window's API with `authorization`, as the window's script polls. */
async function apiStatus(origin: string, authorization: string): Promise<{ status: number; id: string | null }> {
  const res = await fetch(`${origin}/api/status`, { headers: { authorization } });
  const body = (await res.json()) as { error?: { id: string } };
  return { status: res.status, id: body.error?.id ?? null };
}

function adminUrl(config: string): string {
  const r = spawnSync(process.execPath, [CLI, 'admin-url', '--config', config], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return /(http:\/\/\S+\?login=\S+)/.exec(r.stdout)![1]!;
}

/** `link` sent to the window's current address (`current`: any URL of it): the agent draws a new one at each start. */
function movedTo(link: string, current: string): string {
  const url = new URL(link);
  url.host = new URL(current).host;
  return url.href;
}

async function trade(link: string): Promise<{ status: number; id: string | null }> {
  const url = new URL(link);
  const res = await fetch(`${url.origin}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json', origin: url.origin }, body: JSON.stringify({ code: url.searchParams.get('login') }) });
  const body = (await res.json()) as { error?: { id: string } };
  return { status: res.status, id: body.error?.id ?? null };
}

describe('login links', () => {
  it('a used link does not work again after the agent restarts', async () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { port: await freePort() } });
    let agent = await startChildAgent(config);
    let link: string;
    try {
      const r = spawnSync(process.execPath, [CLI, 'admin-url', '--config', config], { encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, r.stderr);
      link = /(http:\/\/\S+\?login=\S+)/.exec(r.stdout)![1]!;
      assert.deepEqual(await trade(link), { status: 200, id: null });
      assert.deepEqual(await trade(link), { status: 401, id: 'login_code_used' });
    } finally {
      await agent.kill('SIGTERM');
    }
    const used = path.join(dir, 'data', 'login-codes-used.json');
    assert.equal(fs.statSync(used).mode & 0o777, 0o600);
    agent = await startChildAgent(config);
    try {
      // Refused after the restart too: no link outlives the start of the agent that made it.
      assert.deepEqual(await trade(movedTo(link, adminUrl(config))), { status: 401, id: 'login_code_invalid' }, 'a used link worked after the restart');
    } finally {
      await agent.kill('SIGTERM');
    }
  });

  it('a session and an unused link end with the agent that issued them', async () => {
    const dir = tempDir();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { port: await freePort() } });
    let agent = await startChildAgent(config);
    let session: string;
    let unused: string;
    let origin: string;
    try {
      const link = adminUrl(config);
      origin = new URL(link).origin;
      session = await login(link);
      unused = adminUrl(config);
      assert.deepEqual(await apiStatus(origin, `Session ${session}`), { status: 200, id: null });
    } finally {
      await agent.kill('SIGTERM');
    }
    agent = await startChildAgent(config);
    try {
      // The window has a new origin at each start (admin.newAddressEachStart): both are sent there.
      const now = new URL(adminUrl(config)).origin;
      assert.notEqual(now, origin);
      assert.equal(new URL(now).port, new URL(origin).port);
      assert.deepEqual(await apiStatus(now, `Session ${session}`), { status: 401, id: 'admin_session_expired' });
      // The command it names runs as printed for this site: with its --config.
      const expired = (await (await fetch(`${now}/api/status`, { headers: { authorization: `Session ${session}` } })).json()) as { error: { message: string } };
      assert.ok(expired.error.message.includes(`pos-sync-agent admin-url --config ${config}`), expired.error.message);
      assert.deepEqual(await trade(movedTo(unused, now)), { status: 401, id: 'login_code_invalid' });
      // A link from this start works.
      assert.deepEqual(await apiStatus(now, `Session ${await login(adminUrl(config))}`), { status: 200, id: null });
    } finally {
      await agent.kill('SIGTERM');
    }
  });

  it("another account that listens on the window's port while the agent is stopped gets no session that works", { timeout: 120_000 }, async () => {
    const dir = tempDir();
    const port = await freePort();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { port } });
    let agent = await startChildAgent(config);
    let origin: string;
    let session: string;
    try {
      const link = adminUrl(config);
      origin = new URL(link).origin;
      session = await login(link);
    } finally {
      await agent.kill('SIGTERM');
    }
    // nobody listens on the port and records what the open window's next poll sends it.
    const squatter = spawn(
      'setpriv',
      ['--reuid=nobody', '--regid=nogroup', '--clear-groups', reachableByNobody(process.execPath), '-e',
        `require('node:http').createServer((req, res) => { process.stdout.write(JSON.stringify(req.headers.authorization ?? null) + '\\n'); res.end('{}'); }).listen(${port}, ${JSON.stringify(new URL(origin).hostname)}, () => process.stdout.write('listening\\n'));`],
      { cwd: '/', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let captured: string;
    try {
      let out = '';
      squatter.stdout!.on('data', (c) => (out += c));
      while (!out.includes('listening')) await once(squatter.stdout!, 'data');
      // The window's script, still open, polls as before.
      await fetch(`${origin}/api/status`, { headers: { authorization: `Session ${session}` } });
      while (out.split('\n').length < 3) await once(squatter.stdout!, 'data');
      captured = JSON.parse(out.split('\n')[1]!) as string;
      assert.equal(captured, `Session ${session}`, 'the squatter did not receive the session: this test proves nothing');
    } finally {
      squatter.kill();
      await once(squatter, 'exit');
    }
    agent = await startChildAgent(config);
    try {
      // What nobody captured does not open the agent that starts next.
      const replayed = spawnSync(
        'setpriv',
        ['--reuid=nobody', '--regid=nogroup', '--clear-groups', reachableByNobody(process.execPath), '-e',
          `fetch(${JSON.stringify(`${new URL(adminUrl(config)).origin}/api/status`)}, { headers: { authorization: process.env.CAPTURED } }).then((r) => console.log(r.status));`],
        { cwd: '/', env: { PATH: process.env.PATH, CAPTURED: captured }, encoding: 'utf8', timeout: 30_000 },
      );
      assert.equal(replayed.stdout.trim(), '401', replayed.stderr);
    } finally {
      await agent.kill('SIGTERM');
    }
  });

  it('serve under a service manager prints how to get a link, never a live one', async () => {
    const dir = tempDir();
    const port = await freePort();
    const config = writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { port } });
    // systemd sets JOURNAL_STREAM (and INVOCATION_ID) for a service whose output goes to the journal.
    const agent = await startChildAgent(config, { JOURNAL_STREAM: '8:12345', INVOCATION_ID: '0123456789abcdef' });
    try {
      const out = agent.output();
      assert.doesNotMatch(out, /login=/);
      assert.match(out, new RegExp(`Status window: http://127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}:${port}/ \\(get a one-time login link with: pos-sync-agent admin-url --config ${config.replace(/[/.]/g, '\\$&')}\\)`));
    } finally {
      await agent.kill('SIGTERM');
    }
  });

  it('a live link only to a person at a terminal', () => {
    assert.equal(mayPrintLoginLink({}, true, false), true);
    assert.equal(mayPrintLoginLink({}, false, false), false, 'no terminal: a service, or output into a file');
    assert.equal(mayPrintLoginLink({ INVOCATION_ID: 'x' }, true, false), false);
    assert.equal(mayPrintLoginLink({ JOURNAL_STREAM: '8:1' }, true, false), false);
    assert.equal(mayPrintLoginLink({}, true, true), false, '--no-login-link');
  });
});
