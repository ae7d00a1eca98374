import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../../helpers/fixtures';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const CLI = path.join(ROOT, 'bin', 'pos-sync-agent.cjs');
const LAUNCHER = path.join(ROOT, 'test', 'helpers', 'ops', 'serve-with-secrets.ts');
const STAND_IN = path.join(ROOT, 'test', 'helpers', 'ops', 'stand-in-tunnel.mjs');
const WEBHOOK_TOKEN = 'whk-7d1f2a9c4e6b8a0d3f5e';
const TUNNEL_TOKEN = 'tun-0b9e8d7c6a5f4e3d2c1b';

function cli(args: string[], input?: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}

function cmdlineOf(pid: number): string {
  return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
}

function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(entry), ...childPids(Number(entry)));
    } catch {
      // exited
    }
  }
  return out;
}

describe('secrets', () => {
  it('`secrets set` takes the value from stdin into an owner-only file; `secrets list` shows names only', () => {
    const dataDir = tempDir();
    const config = path.join(dataDir, 'config.json');
    fs.writeFileSync(config, JSON.stringify({ dataDir }));
    const set = cli(['secrets', 'set', 'webhook.bearerToken', '--config', config], `${WEBHOOK_TOKEN}\n`);
    assert.equal(set.status, 0, set.stderr);
    assert.ok(!set.stdout.includes(WEBHOOK_TOKEN) && !set.stderr.includes(WEBHOOK_TOKEN));
    const file = path.join(dataDir, 'secrets.json');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.equal((JSON.parse(fs.readFileSync(file, 'utf8')) as { secrets: Record<string, string> }).secrets['webhook.bearerToken'], WEBHOOK_TOKEN);
    const list = cli(['secrets', 'list', '--config', config]);
    assert.equal(list.status, 0, list.stderr);
    assert.match(list.stdout, /webhook\.bearerToken\s+set \(secrets file\)/);
    assert.match(list.stdout, /employees\.auth\.token\s+not set/);
    assert.ok(!list.stdout.includes(WEBHOOK_TOKEN));
    // An unknown name is refused (a typo would otherwise store a secret nothing reads).
    const typo = cli(['secrets', 'set', 'webhook.bearerTokn', '--config', config], 'x\n');
    assert.equal(typo.status, 4);
    assert.match(typo.stderr, /unknown secret/);
    // A value on the command line is not accepted at all.
    assert.equal(cli(['secrets', 'set', 'webhook.bearerToken', WEBHOOK_TOKEN, '--config', config]).status, 2);
    // A group-readable secrets file is refused with the fix in the message.
    fs.chmodSync(file, 0o644);
    const refused = cli(['secrets', 'list', '--config', config]);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /group or others may read it \(mode 644\); run: chmod 600/);
  });

  it('a running agent uses the secrets, yet they appear in no log file and no command line (agent or tunnel)', async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const control = path.join(dataDir, 'control');
    fs.writeFileSync(control, 'ok');
    const config = path.join(dataDir, 'config.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        dataDir,
        webhook: { port: 0 },
        admin: { enabled: false },
        backup: { enabled: false },
        tunnel: {
          command: process.execPath,
          args: [STAND_IN, '--listen', String(port), '--target', '{webhookPort}', '--control', control],
          publicUrl: `http://127.0.0.1:${port}`,
          healthCheckIntervalSeconds: 0.2,
          healthCheckTimeoutSeconds: 1,
        },
      }),
    );
    assert.equal(cli(['secrets', 'set', 'webhook.bearerToken', '--config', config], WEBHOOK_TOKEN).status, 0);
    assert.equal(cli(['secrets', 'set', 'tunnel.token', '--config', config], TUNNEL_TOKEN).status, 0);

    const agent = spawn(process.execPath, ['--import', 'tsx', LAUNCHER, config], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    agent.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    agent.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const deadline = Date.now() + 30_000;
      while (!stdout.includes('ready ')) {
        if (Date.now() > deadline || agent.exitCode !== null) throw new Error(`agent did not start: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const webhookUrl = /ready (\S+)/.exec(stdout)![1]!;
      const body = JSON.stringify({ ChangeSequence: 1, ParentChangeSequence: 0, LocationID: 3, ScheduledItems: [] });
      const post = (token: string): Promise<Response> =>
        fetch(webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body });
      assert.equal((await post('wrong-token-123')).status, 401, 'the bearer token from the secrets file is enforced');
      assert.equal((await post(WEBHOOK_TOKEN)).status, 200);
      // Through the tunnel, which got its token from the secret store (once the supervisor saw it up).
      const stateFile = path.join(dataDir, 'tunnel-state.json');
      const tunnelDeadline = Date.now() + 20_000;
      const phase = (): string | null => {
        try {
          return (JSON.parse(fs.readFileSync(stateFile, 'utf8')) as { phase: string }).phase;
        } catch {
          return null;
        }
      };
      while (phase() !== 'running') {
        if (Date.now() > tunnelDeadline) throw new Error(`tunnel never ran: ${phase()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const viaTunnel = await fetch(`http://127.0.0.1:${port}${new URL(webhookUrl).pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_TOKEN}` },
        body,
      });
      assert.equal(viaTunnel.status, 200);
      // Let the tunnel's output (which prints its token) reach the log.
      await new Promise((r) => setTimeout(r, 500));

      const pids = [agent.pid!, ...childPids(agent.pid!)];
      assert.ok(pids.length >= 2, 'the tunnel child is running');
      for (const pid of pids) {
        const cmd = cmdlineOf(pid);
        assert.ok(!cmd.includes(WEBHOOK_TOKEN) && !cmd.includes(TUNNEL_TOKEN), `secret in argv of ${pid}: ${cmd}`);
      }
    } finally {
      agent.kill('SIGTERM');
      await new Promise((r) => agent.once('exit', r));
    }
    const logs = fs.readdirSync(path.join(dataDir, 'logs')).map((f) => fs.readFileSync(path.join(dataDir, 'logs', f), 'utf8')).join('\n');
    assert.match(logs, /secrets resolved from .*: webhook\.bearerToken, tunnel\.token/);
    assert.match(logs, /resolved values: \*{8} \*{8}/, 'the careless log line is redacted');
    assert.match(logs, /Using TUNNEL_TOKEN=\*{8}/, "the tunnel's own output is redacted");
    assert.ok(!logs.includes(WEBHOOK_TOKEN), 'webhook token in the log');
    assert.ok(!logs.includes(TUNNEL_TOKEN), 'tunnel token in the log');
    assert.ok(!stdout.includes(WEBHOOK_TOKEN) && !stderr.includes(WEBHOOK_TOKEN));
  });
});
