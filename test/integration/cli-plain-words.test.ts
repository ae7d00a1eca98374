import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { REPO_ROOT, writeConfig } from '../helpers/child-agent';
import { item, price, tempDir, update } from '../helpers/fixtures';

/** The command line's smaller answers, each as a new user met it (issue 27), through real processes. */

function cli(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'pos-sync-agent.cjs'), ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the command line in plain words', () => {
  const dir = tempDir();
  const dataDir = path.join(dir, 'data');
  const config = writeConfig(dir, { dataDir, sync: { baselineSettleSeconds: 0 } });

  it('says a missing configuration file does not exist, and where it looked', () => {
    const r = cli(['status', '--config', path.join(dir, 'site.json')]);
    assert.equal(r.status, 3);
    assert.match(r.stderr, /^invalid configuration: configuration file: .*site\.json does not exist; check the path given with --config \(or POS_SYNC_CONFIG\)/);
    assert.doesNotMatch(r.stderr, /\(file\)|ENOENT/);
  });

  it('suggests the key meant for a mistyped configuration key', () => {
    const bad = path.join(dir, 'typo.json');
    fs.writeFileSync(bad, JSON.stringify({ dataDir, webhok: { port: 1 }, sync: { baselinSettleSeconds: 1 } }));
    const r = cli(['status', '--config', bad]);
    assert.equal(r.status, 3);
    assert.match(r.stderr, /\(root\): unknown key webhok \(did you mean webhook\?\)/);
    assert.match(r.stderr, /sync: unknown key baselinSettleSeconds \(did you mean baselineSettleSeconds\?\)/);
    // Each names where the value was, so it can be found.
    assert.ok(r.stderr.includes(`unknown key webhok (did you mean webhook?) (in ${bad})`), r.stderr);
  });

  it('names the environment variable a wrong key or value came from, not the file', () => {
    const r = cli(['status', '--config', config], { POS_SYNC__admin__prot: '9000', POS_SYNC__sync__pollIntervalMs: '"soon"' });
    assert.equal(r.status, 3);
    assert.match(r.stderr, /admin: unknown key prot \(did you mean port\?\) \(set by the environment variable POS_SYNC__admin__prot\)/);
    assert.match(r.stderr, /sync\.pollIntervalMs: .* \(set by the environment variable POS_SYNC__sync__pollIntervalMs\)/);
    assert.ok(!r.stderr.includes(`(in ${config})`), 'the file was blamed for what the environment set');
  });

  it('names the variable that made a section when a key the section needs is missing, not the file', () => {
    // The file has no employees section: the variable made it, and it lacks baseUrl.
    const r = cli(['status', '--config', config], { POS_SYNC__employees__auth__password: 'pw' });
    assert.equal(r.status, 3);
    assert.match(r.stderr, /employees\.baseUrl: .* \(in the "employees" section that the environment variable POS_SYNC__employees__auth__password creates\)/);
    assert.ok(!r.stderr.includes(`(in ${config})`), r.stderr);
  });

  it('explains an unknown option without parser jargon, and suggests the command meant', () => {
    const r = cli(['status', '-c', config]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^unknown option -c \(did you mean --config\?\); `status` takes: --config, --json, --help\n/);
    assert.doesNotMatch(r.stderr, /positional|'--'/);
    const typo = cli(['stauts', '--config', config]);
    assert.equal(typo.status, 2);
    assert.match(typo.stderr, /^Unknown command: stauts \(did you mean status\?\)/);
  });

  it('prints the version for -v and help for `help` and `help COMMAND`, exit 0', () => {
    const v = cli(['-v']);
    assert.equal(v.status, 0);
    assert.match(v.stdout, /^pos-sync-agent \d+\.\d+\.\d+/);
    const h = cli(['help']);
    assert.equal(h.status, 0);
    assert.match(h.stdout, /^Usage: pos-sync-agent COMMAND/);
    const hs = cli(['help', 'pause']);
    assert.equal(hs.status, 0);
    assert.match(hs.stdout, /^Usage: pos-sync-agent pause \[--reason TEXT\]/);
  });

  it('takes a reason for pause and resume, and the audit log shows it', () => {
    assert.equal(cli(['pause', '--reason', 'menu photo shoot', '--config', config]).status, 0);
    assert.equal(cli(['resume', '--config', config]).status, 0);
    const audit = cli(['audit', '--config', config]);
    assert.match(audit.stdout, /\(command line\): Paused applying updates — reason: menu photo shoot\./);
    assert.match(audit.stdout, /\(command line\): Resumed applying updates\./);
  });

  it('says where a secret given by a configuration override comes from, not "not set"', () => {
    const r = cli(['secrets', 'list', '--config', config], { POS_SYNC__webhook__bearerToken: 'from-the-environment-0123456789' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /webhook\.bearerToken\s+set \(POS_SYNC__webhook__bearerToken, a configuration override\)/);
    assert.doesNotMatch(r.stdout, /from-the-environment/);
  });

  it('finishes the sentence of `backup list --check` for a backup with nothing applied, and names what it resumes from', () => {
    assert.equal(cli(['backup', '--config', config]).status, 0);
    const empty = cli(['backup', 'list', '--check', '--config', config]);
    assert.match(empty.stdout, / ok \(no update applied in it yet\)\n/);
    const file = path.join(dir, 'u.json');
    fs.writeFileSync(file, JSON.stringify(update(42, 7, 6, [item('1', 'A', [price('2027-01-01', '2027-12-31', 'Eat In', '3.00')])])));
    assert.equal(cli(['import', file, '--config', config]).status, 0);
    assert.equal(cli(['backup', '--config', config]).status, 0);
    assert.match(cli(['backup', 'list', '--check', '--config', config]).stdout, / ok; resumes location 42 from 7\n/);
  });

  it('says what each `dev publisher` option means, with its default', () => {
    const r = cli(['dev', 'publisher', '--help']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /--updates VALUE\s+how many chained updates per location; default 10/);
    assert.match(r.stdout, /--drop VALUE\s+the share of updates never delivered, 0 to 1 \(gaps to see\); default 0/);
  });
});
