import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { mayPrintLoginLink } from '../../../src/cli/services';
import { freePort, REPO_ROOT, startChildAgent, writeConfig } from '../../helpers/child-agent';
import { tempDir } from '../../helpers/fixtures';

/** Issue 24, point 6: login links work once, across restarts, and never land in a service's journal. */

const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');

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
      assert.deepEqual(await trade(link), { status: 401, id: 'login_code_used' }, 'still used after the restart');
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
      assert.match(out, new RegExp(`Status window: http://127\\.0\\.0\\.1:${port}/ \\(get a one-time login link with: pos-sync-agent admin-url --config ${config.replace(/[/.]/g, '\\$&')}\\)`));
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
