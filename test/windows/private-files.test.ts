import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { laneDir } from './lane';
import { AGENT_BIN, runWindows, startAgent, WINDOWS_NODE, winPath, writeWindowsConfig } from './wine';

/**
 * "Owner only" on Windows: the agent gives its data, log and backup folders an ACL through icacls
 * (src/ops/private-files.ts), and the till's reader read access to pos-sync.db and its -wal/-shm.
 * Wine's icacls accepts every call and changes nothing, and Wine runs every Windows process as the
 * same Unix user, so what the ACLs enforce cannot be shown here (docs/reliability.md, "Windows").
 * What can: the agent calls icacls for each folder with the arguments that make it private, and for
 * the till's files, before it serves; and a refused call stops start-up.
 */
describe('Windows: private files (ACLs through icacls)', () => {
  const work = laneDir('acl');
  const out = { outDir: path.join(work, 'out') };
  // A copy of node.exe named icacls.exe, first on the agent's PATH; fixtures/record-icacls.cjs makes it record its arguments.
  const shim = path.join(work, 'bin');
  fs.mkdirSync(shim, { recursive: true });
  fs.copyFileSync(WINDOWS_NODE, path.join(shim, 'icacls.exe'));
  const recorded = path.join(work, 'icacls.jsonl');
  const windowsEnv = (exit: number): Record<string, string> => ({
    PATH: `${winPath(shim)};C:\\windows\\system32;C:\\windows`,
    // Forward slashes: NODE_OPTIONS reads a backslash as an escape.
    NODE_OPTIONS: `--require "${winPath(path.join(__dirname, 'fixtures', 'record-icacls.cjs')).replace(/\\/g, '/')}"`,
    POS_SYNC_TEST_ICACLS_LOG: winPath(recorded),
    POS_SYNC_TEST_ICACLS_EXIT: String(exit),
  });

  it('makes the data, log and backup folders private before serving, and gives the till reader its three files', async () => {
    const dataDir = path.join(work, 'data');
    const config = writeWindowsConfig(path.join(work, 'acl.json'), {
      dataDir: winPath(dataDir),
      webhook: { port: 0 },
      admin: { enabled: false },
      backup: { enabled: false },
      till: { readerGroup: 'TillUsers' },
    });
    const agent = await startAgent(config, dataDir, { ...out, windowsEnv: windowsEnv(0) });
    assert.equal(await agent.stop(), 0, agent.output());
    const calls = fs.readFileSync(recorded, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]);
    const folders = calls.filter((c) => c.includes('/inheritance:r'));
    // Each of the three that exists at start (the backups folder comes later, inside the data folder, and inherits its ACL).
    assert.ok(folders.some((c) => c[0] === winPath(dataDir)), JSON.stringify(calls));
    for (const c of folders) assert.ok([winPath(dataDir), winPath(path.join(dataDir, 'backups')), winPath(path.join(dataDir, 'logs'))].includes(c[0]!), c[0]);
    for (const c of folders) {
      assert.equal(c.length, 7, JSON.stringify(c));
      assert.deepEqual([c[1], c[2]], ['/inheritance:r', '/grant:r']);
      assert.match(c[3]!, /^.+:\(OI\)\(CI\)F$/, 'the owner, inherited by files and folders');
      assert.deepEqual(c.slice(4), ['*S-1-5-18:(OI)(CI)F', '*S-1-5-32-544:(OI)(CI)F', '/Q'], 'SYSTEM and Administrators by SID, whatever the language of Windows');
    }
    // Each folder first becomes the agent's own, then private, then loses the broad grants written on
    // it and every entry written on its contents; never reset itself (it would inherit its parent's).
    for (const c of folders) {
      const at = calls.indexOf(c);
      assert.deepEqual(calls[at - 1], [c[0], '/setowner', c[3]!.replace(/:\(OI\)\(CI\)F$/, ''), '/Q'], JSON.stringify(calls));
      assert.deepEqual(calls[at + 1], [c[0], '/remove:g', '*S-1-1-0', '*S-1-5-11', '*S-1-5-32-545', '*S-1-5-32-546', '*S-1-5-4', '/Q'], JSON.stringify(calls));
    }
    assert.ok(calls.some((c) => c[0] === `${winPath(dataDir)}\\*` && c[1] === '/reset'), 'the data folder\'s contents reset');
    assert.ok(!calls.some((c) => c[1] === '/reset' && !c[0]!.endsWith('\\*')), 'a folder itself reset');
    const reader = calls.filter((c) => c.includes('TillUsers:(R)'));
    assert.ok(reader.length >= 1, JSON.stringify(calls));
    for (const c of reader) {
      assert.match(c[0]!, /pos-sync\.db(-wal|-shm)?$/);
      assert.deepEqual(c.slice(1), ['/grant', 'TillUsers:(R)', '/Q']);
    }
  });

  it('stops start-up when icacls refuses (the folder cannot be made private), naming the call', async () => {
    const dataDir = path.join(work, 'refused');
    const config = writeWindowsConfig(path.join(work, 'refused.json'), { dataDir: winPath(dataDir), webhook: { port: 0 }, admin: { enabled: false }, backup: { enabled: false } });
    const r = await runWindows([AGENT_BIN, 'serve', '--config', winPath(config)], { ...out, windowsEnv: windowsEnv(5) });
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stderr, /icacls .*\/inheritance:r.* failed \(5\)/);
    // The owner could not be changed either: said, before the grant that stops start-up.
    assert.match(`${r.stdout}${r.stderr}`, /could not make .+ its owner, so the account that owns it may still change its permissions/);
    assert.doesNotMatch(r.stdout, /Receiving menu cycle updates/);
    assert.equal(fs.existsSync(path.join(dataDir, 'agent.pid')), false);
  });
});
