import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { laneDir, lastSequence, post, sample } from './lane';
import { cli, DRIVE_C, REPO_ROOT, runWindows, AGENT_BIN, startAgent, winPath, writeWindowsConfig } from './wine';

/** Start-up as a Windows site sees it: the user's %APPDATA%, a config from a Windows editor, busy ports, a second agent. */

async function occupy(): Promise<{ port: number; close: () => void }> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('Windows: start-up', () => {
  const work = laneDir('startup');
  const out = { outDir: path.join(work, 'out') };

  it('uses %APPDATA%\\pos-sync-agent of a user named with a space and a non-ASCII letter, from a BOM + CRLF config; a second serve is refused', async () => {
    // A profile as Windows makes it, in the prefix's C:\users (unique per run, removed after).
    const user = `Zoë Ångström ${process.pid}`;
    const profile = path.join(DRIVE_C, 'users', user);
    fs.mkdirSync(path.join(profile, 'AppData', 'Roaming'), { recursive: true });
    after(() => fs.rmSync(profile, { recursive: true, force: true }));
    const windowsEnv = {
      USERNAME: user,
      USERPROFILE: winPath(profile),
      APPDATA: winPath(path.join(profile, 'AppData', 'Roaming')),
      LOCALAPPDATA: winPath(path.join(profile, 'AppData', 'Local')),
    };
    const dataDir = path.join(profile, 'AppData', 'Roaming', 'pos-sync-agent');
    // No dataDir: the default folder. Written as Notepad saves "UTF-8 with BOM", CRLF line ends.
    const config = writeWindowsConfig(path.join(profile, 'Documents', 'pos sync.json'), {
      webhook: { port: 0 },
      admin: { port: 0 },
      sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 },
    });
    const agent = await startAgent(config, dataDir, { ...out, windowsEnv });
    try {
      assert.match(agent.output(), new RegExp(`data in ${winPath(dataDir).replace(/\\/g, '\\\\')}`));
      for (const f of ['agent.db', 'pos-sync.db', 'staff.db', 'admin-token']) assert.ok(fs.existsSync(path.join(dataDir, f)), `${f} in the default data folder`);
      assert.equal((await post(agent.url, sample(1))).status, 200);
      // The command line finds the same folder and reaches the agent over its named pipe, with and without --config.
      const status = await cli(['status', '--config', winPath(config)], { ...out, windowsEnv });
      assert.equal(status.code, 0, status.stderr);
      assert.match(status.stdout, new RegExp(`Agent running \\(pid ${agent.windowsPid}`));
      const bare = await cli(['status'], { ...out, windowsEnv });
      assert.equal(bare.code, 0, bare.stderr);
      assert.match(bare.stdout, new RegExp(`Agent running \\(pid ${agent.windowsPid}`));
      assert.equal(lastSequence(dataDir, 3021), 1041);

      // A second agent on the same folder: refused, and the first one is untouched.
      const second = await runWindows([AGENT_BIN, 'serve', '--config', winPath(config)], { ...out, windowsEnv });
      assert.notEqual(second.code, 0, second.stdout);
      assert.equal(second.code, 1, `${second.stdout}${second.stderr}`);
      assert.ok(
        second.stderr.includes(`one agent per data folder: an agent (pid ${agent.windowsPid}, started `) && second.stderr.includes(`is running on ${winPath(dataDir)}`),
        second.stderr,
      );
      assert.doesNotMatch(second.stdout, /Receiving menu cycle updates/);
      assert.equal((await post(agent.url, sample(2))).status, 200);
    } finally {
      assert.equal(await agent.stop(), 0, agent.output());
    }
  });

  it('upgrades a 0.1 single-file data folder on its first Windows start (the split and its safety copy)', async () => {
    const dataDir = path.join(work, 'site from 0.1');
    fs.mkdirSync(dataDir, { recursive: true });
    fs.copyFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'legacy-0.1', 'pos-sync.db'), path.join(dataDir, 'pos-sync.db'));
    const config = writeWindowsConfig(path.join(work, 'legacy.json'), { dataDir: winPath(dataDir), webhook: { port: 0 }, admin: { enabled: false }, backup: { enabled: false } });
    const agent = await startAgent(config, dataDir, out);
    try {
      for (const f of ['agent.db', 'staff.db']) assert.ok(fs.existsSync(path.join(dataDir, f)), `${f} split out of the 0.1 file`);
      assert.equal(fs.readdirSync(path.join(dataDir, 'backups')).filter((f) => /^pre-0\.2-split-.*\.db$/.test(f)).length, 1, "0.1's whole file kept");
      assert.equal(lastSequence(dataDir, 3021), 1043);
      assert.equal(lastSequence(dataDir, 200), 10);
      assert.doesNotMatch(agent.output(), /\[error\]|EPERM/);
    } finally {
      assert.equal(await agent.stop(), 0, agent.output());
    }
  });

  it('a busy webhook port stops start-up naming webhook.port, with nothing left listening or locked', async () => {
    const dataDir = path.join(work, 'busy');
    const blocker = await occupy();
    const admin = await occupy();
    const adminPort = admin.port;
    admin.close();
    try {
      const config = writeWindowsConfig(path.join(work, 'busy.json'), { dataDir: winPath(dataDir), webhook: { port: blocker.port }, admin: { port: adminPort } });
      const r = await runWindows([AGENT_BIN, 'serve', '--config', winPath(config)], out);
      assert.equal(r.code, 3, `${r.stdout}${r.stderr}`);
      assert.match(r.stderr, new RegExp(`webhook\\.port: port ${blocker.port} on 127\\.0\\.0\\.1 is already in use`));
      assert.doesNotMatch(`${r.stdout}${r.stderr}`, /EADDRINUSE|Receiving menu cycle updates| {4}at /);
      assert.equal(await listening(adminPort), false, 'the status window is not left listening');
      assert.equal(fs.existsSync(path.join(dataDir, 'agent.pid')), false, 'no agent.pid is left');
      // Not locked: an agent on a free port starts on the same folder at once.
      blocker.close();
      const again = writeWindowsConfig(path.join(work, 'busy-again.json'), { dataDir: winPath(dataDir), webhook: { port: 0 }, admin: { port: 0 } });
      const agent = await startAgent(again, dataDir, out);
      assert.equal(await agent.stop(), 0, agent.output());
    } finally {
      blocker.close();
    }
  });
});
