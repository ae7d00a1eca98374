import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { machineConfigFile, machineDataDir } from '../../../src/config/site';
import { tempDir } from '../../helpers/fixtures';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const UNIT = path.join(ROOT, 'packaging', 'systemd', 'pos-sync-agent.service');
const SYSUSERS = path.join(ROOT, 'packaging', 'systemd', 'pos-sync-agent.sysusers');
/** `systemd-analyze security`'s exposure (0-10, lower is safer), times ten as --threshold takes it. */
const EXPOSURE_THRESHOLD = 20;

/** A unit file as sections of key -> values (systemd allows repeated keys). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      current = new Map();
      sections.set(header[1]!, current);
      continue;
    }
    const eq = line.indexOf('=');
    assert.ok(current && eq > 0, `malformed line: ${line}`);
    const key = line.slice(0, eq).trim();
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1).trim()]);
  }
  return sections;
}

/** The unit with this checkout's bin as the installed command (verify checks that the program exists). */
function installedCopy(text = fs.readFileSync(UNIT, 'utf8')): string {
  const copy = path.join(tempDir(), 'pos-sync-agent.service');
  fs.writeFileSync(copy, text.replace('/usr/local/bin/pos-sync-agent', path.join(ROOT, 'bin', 'pos-sync-agent.cjs')));
  return copy;
}

function analyze(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  assert.ok(!probe.error, 'systemd-analyze is not installed: sudo apt-get install -y systemd (npm test installs it when run as root)');
  return spawnSync('systemd-analyze', args, { encoding: 'utf8' });
}

describe('systemd system unit (packaging/systemd)', () => {
  const unit = parseUnit(fs.readFileSync(UNIT, 'utf8'));
  const service = unit.get('Service')!;
  const one = (key: string): string | undefined => service.get(key)?.[0];

  it('runs serve on the machine-wide configuration under its own account, from boot, restarting on failure', () => {
    assert.equal(unit.get('Install')?.get('WantedBy')?.[0], 'multi-user.target', 'a system unit: from boot, nobody logged in');
    assert.deepEqual(one('ExecStart')!.split(/\s+/), ['/usr/local/bin/pos-sync-agent', 'serve', '--config', machineConfigFile({}, 'linux')]);
    assert.equal(one('User'), 'pos-sync-agent');
    assert.equal(one('StateDirectory'), 'pos-sync-agent');
    assert.equal(path.posix.join('/var/lib', one('StateDirectory')!), machineDataDir({}, 'linux'), "the machine-wide configuration's default data folder");
    assert.equal(one('ConfigurationDirectory'), 'pos-sync-agent');
    assert.equal(one('Restart'), 'on-failure');
    assert.equal(one('UMask'), '0077');
    assert.equal(one('KillSignal'), 'SIGTERM');
    // The account exists through sysusers.d, with the state folder as its home.
    assert.match(fs.readFileSync(SYSUSERS, 'utf8'), /^u pos-sync-agent - "[^"]+" \/var\/lib\/pos-sync-agent$/m);
  });

  it('is hardened', () => {
    for (const [key, value] of [
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['ProtectHome', 'yes'],
      ['PrivateTmp', 'yes'],
      ['PrivateDevices', 'yes'],
      ['CapabilityBoundingSet', ''],
      ['RestrictSUIDSGID', 'yes'],
      ['SystemCallFilter', '@system-service'],
    ] as const) {
      assert.equal(one(key), value, key);
    }
    assert.equal(one('MemoryDenyWriteExecute'), undefined, "V8's JIT needs writable code pages");
  });

  it('passes systemd-analyze verify, which does catch a broken unit', (t) => {
    const result = analyze(['verify', installedCopy()]);
    t.diagnostic(`systemd-analyze ${analyze(['--version']).stdout.split('\n')[0] ?? ''}`);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr.trim(), '', result.stderr);
    const broken = installedCopy(fs.readFileSync(UNIT, 'utf8').replace('ExecStart=/usr/local/bin/pos-sync-agent', 'ExecStart=/nonexistent/pos-sync-agent'));
    assert.notEqual(analyze(['verify', broken]).status, 0);
  });

  it(`passes systemd-analyze security --offline=yes under exposure ${EXPOSURE_THRESHOLD / 10}, which an unhardened unit does not`, (t) => {
    const result = analyze(['security', '--offline=yes', `--threshold=${EXPOSURE_THRESHOLD}`, installedCopy()]);
    t.diagnostic(result.stdout.trim().split('\n').pop() ?? '');
    assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
    const bare = fs
      .readFileSync(UNIT, 'utf8')
      .split('\n')
      .filter((l) => !/^(NoNewPrivileges|CapabilityBoundingSet|AmbientCapabilities|Protect|Private|Restrict|Device|Lock|Remove|Keyring|SystemCall)/.test(l))
      .join('\n');
    assert.notEqual(analyze(['security', '--offline=yes', `--threshold=${EXPOSURE_THRESHOLD}`, installedCopy(bare)]).status, 0);
  });
});
