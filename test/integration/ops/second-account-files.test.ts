import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { freePort, REPO_ROOT, writeConfig } from '../../helpers/child-agent';
import { tempDir } from '../../helpers/fixtures';

/**
 * Issue 24, points 3 and 4: another account on the PC (nobody, through setpriv) prepares the data
 * folder, or plants links where the agent writes outside it. The agent refuses the first and never
 * writes through the second.
 */

const CLI = path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs');

function asNobody(args: string[]): { status: number | null; out: string } {
  const r = spawnSync('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', ...args], { encoding: 'utf8', cwd: '/', timeout: 30_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function cli(config: string, args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [CLI, ...args, '--config', config], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** A folder every account may pass through and write, sticky like /tmp: where a site might put a shared folder. */
function sharedParent(): string {
  const dir = tempDir();
  fs.chmodSync(dir, 0o1777);
  return dir;
}

describe('a data folder that is not the agent\'s own (a second OS account)', () => {
  it('the test runs as root, so it can act as nobody (CI does)', () => {
    assert.equal(process.getuid?.(), 0, 'run these tests as root: they act as nobody through setpriv');
  });

  it('nobody makes the data folder (0777) with its own admin-token: serve refuses with exit 3, naming the folder and the fix', async () => {
    const parent = sharedParent();
    const dataDir = path.join(parent, 'data');
    assert.equal(asNobody(['mkdir', '-m', '0777', dataDir]).status, 0);
    assert.equal(asNobody(['sh', '-c', `umask 000; printf %s 'nobodys-own-admin-token-0123456789abcdef' > '${dataDir}/admin-token'`]).status, 0);
    const config = writeConfig(tempDir(), { dataDir, webhook: { port: 0 }, admin: { port: await freePort() } });
    const r = cli(config, ['serve']);
    assert.equal(r.status, 3, r.out);
    assert.match(r.out, new RegExp(`dataDir: refusing to use ${dataDir.replace(/[/.]/g, '\\$&')}, which another account could have changed: `));
    assert.match(r.out, /belongs to nobody \(uid \d+\), not to the agent's account root/);
    assert.match(r.out, /Fix: if you made it and trust what is in it, run: chown -R root /);
    // Nothing of the agent's was created in it: no database, no socket, no token of its own.
    assert.deepEqual(fs.readdirSync(dataDir).sort(), ['admin-token']);
    // And admin-url does not hand out a link signed with nobody's token.
    const url = cli(config, ['admin-url']);
    assert.notEqual(url.status, 0, url.out);
    assert.doesNotMatch(url.out, /login=/);
  });

  it('a folder of its own that others may write, or a file in it that another account owns, is refused too', () => {
    const dataDir = path.join(tempDir(), 'data');
    fs.mkdirSync(dataDir);
    fs.chmodSync(dataDir, 0o777);
    const config = writeConfig(tempDir(), { dataDir, webhook: { port: 0 }, admin: { port: 0 } });
    const open = cli(config, ['serve']);
    assert.equal(open.status, 3, open.out);
    assert.match(open.out, /may be written by every account \(mode 0777\)/);
    assert.match(open.out, /Fix: run: chmod -R go-w /);

    fs.chmodSync(dataDir, 0o700);
    fs.mkdirSync(path.join(dataDir, 'logs'));
    fs.writeFileSync(path.join(dataDir, 'logs', 'agent.log'), 'planted\n');
    fs.chownSync(path.join(dataDir, 'logs', 'agent.log'), Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim()), -1);
    const planted = cli(config, ['serve']);
    assert.equal(planted.status, 3, planted.out);
    assert.match(planted.out, new RegExp(`${path.join(dataDir, 'logs', 'agent.log').replace(/[/.]/g, '\\$&')} belongs to nobody`));
  });

  it('a data folder not there yet, in a folder its group may write: refused before anything is made or logged there', () => {
    const shared = tempDir();
    fs.chmodSync(shared, 0o775);
    const dataDir = path.join(shared, 'data');
    const config = writeConfig(tempDir(), { dataDir, webhook: { port: 0, allowUnauthenticated: false }, admin: { port: 0 } });
    const r = cli(config, ['serve']);
    assert.equal(r.status, 3, r.out);
    assert.match(r.out, new RegExp(`dataDir: refusing to use ${dataDir.replace(/[/.]/g, '\\$&')}, which another account could have changed: ${shared.replace(/[/.]/g, '\\$&')} may be written by its group \\(mode 0775\\)`));
    assert.doesNotMatch(r.out, /made this install's webhook token/);
    assert.deepEqual(fs.readdirSync(shared), [], 'no token, log or folder was made in it');
  });
});

describe('files written outside the data folder, with links planted by a second account', () => {
  it('diagnose --out into a shared folder: a planted <out>.partial or <out> link never overwrites its target', () => {
    const dataDir = path.join(tempDir(), 'data');
    const config = writeConfig(tempDir(), { dataDir, webhook: { port: 0 }, admin: { port: 0 } });
    const victim = path.join(tempDir(), 'root-only.conf');
    fs.writeFileSync(victim, 'root secret\n', { mode: 0o600 });
    const shared = sharedParent();
    const out = path.join(shared, 'diag.zip');
    // nobody plants both names the old code wrote through.
    assert.equal(asNobody(['ln', '-s', victim, `${out}.partial`]).status, 0);
    assert.equal(asNobody(['ln', '-s', victim, out]).status, 0);
    const r = cli(config, ['diagnose', '--out', out]);
    assert.equal(r.status, 0, r.out);
    assert.equal(fs.readFileSync(victim, 'utf8'), 'root secret\n', 'the planted link\'s target is untouched');
    const st = fs.lstatSync(out);
    assert.ok(st.isFile(), 'the zip replaced the link at <out>, it did not write through it');
    assert.equal(st.mode & 0o777, 0o600);
    assert.equal(fs.readFileSync(out).subarray(0, 2).toString('latin1'), 'PK');
    assert.ok(fs.lstatSync(`${out}.partial`).isSymbolicLink(), 'nobody\'s link is left as it was, not followed');
  });

  it("secrets set with secrets.file in a shared folder: files nobody planted at the writer's old temporary names get nothing", () => {
    const dataDir = path.join(tempDir(), 'data');
    const shared = sharedParent();
    const secretsFile = path.join(shared, 'pos-secrets.json');
    const config = writeConfig(tempDir(), { dataDir, webhook: { port: 0 }, admin: { port: 0 }, secrets: { file: secretsFile } });
    // The old writer opened `<file>.<pid>.tmp` without O_EXCL: nobody plants that name, writable by
    // all, for the pids the next processes will get.
    const next = Number(fs.readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8'));
    const planted = Array.from({ length: 200 }, (_, i) => `${secretsFile}.${next + 1 + i}.tmp`);
    assert.equal(asNobody(['sh', '-c', `umask 000; for f in ${planted.map((f) => `'${f}'`).join(' ')}; do : > "$f"; done`]).status, 0);
    const secret = 'S3cr3t-employee-api-password';
    const r = spawnSync(process.execPath, [CLI, 'secrets', 'set', 'employees.auth.password', '--config', config], { input: `${secret}\n`, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    for (const f of planted) assert.equal(fs.readFileSync(f, 'utf8'), '', `${f} received the secret`);
    const st = fs.lstatSync(secretsFile);
    assert.ok(st.isFile());
    assert.equal(st.mode & 0o777, 0o600);
    assert.equal(st.uid, process.getuid!());
    assert.match(fs.readFileSync(secretsFile, 'utf8'), new RegExp(secret));
    assert.deepEqual(fs.readdirSync(shared).filter((f) => f.endsWith('.partial')), [], 'a half-written file was left');
  });

  it('serve refuses secrets.file or admin.tokenFile in a folder another account may write, naming the key', () => {
    const shared = tempDir();
    fs.chmodSync(shared, 0o777);
    for (const [key, value] of [
      ['secrets', { file: path.join(shared, 'secrets.json') }],
      ['admin', { port: 0, tokenFile: path.join(shared, 'admin-token') }],
    ] as const) {
      const dataDir = path.join(tempDir(), 'data');
      const config = writeConfig(tempDir(), { dataDir, webhook: { port: 0 }, admin: { port: 0 }, [key]: value });
      const r = cli(config, ['serve']);
      assert.equal(r.status, 3, r.out);
      const field = key === 'secrets' ? 'secrets.file' : 'admin.tokenFile';
      assert.match(r.out, new RegExp(`${field.replace('.', '\\.')}: refusing to use ${shared.replace(/[/.]/g, '\\$&')}, which another account could have changed`));
    }
  });

  it('dev publisher --expect-out: a planted link at the file is replaced, its target untouched', () => {
    const victim = path.join(tempDir(), 'victim.txt');
    fs.writeFileSync(victim, 'keep\n');
    const shared = sharedParent();
    const expectOut = path.join(shared, 'expect.json');
    assert.equal(asNobody(['ln', '-s', victim, expectOut]).status, 0);
    // No server listens on port 9: every delivery fails fast; the expectation file is still written.
    // A token of its own: the default data folder's is sent to no URL but its agent's.
    const tokenFile = path.join(tempDir(), 'token');
    fs.writeFileSync(tokenFile, 'a-token\n');
    const r = spawnSync(process.execPath, [CLI, 'dev', 'publisher', '--url', 'http://127.0.0.1:9/webhooks/menu-cycles', '--token-file', tokenFile, '--locations', '1', '--updates', '1', '--items', '1', '--give-up-after', '1', '--expect-out', expectOut], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.ok(r.status === 0 || r.status === 1, `${r.stdout}${r.stderr}`);
    assert.equal(fs.readFileSync(victim, 'utf8'), 'keep\n');
    assert.ok(fs.lstatSync(expectOut).isFile());
  });
});
