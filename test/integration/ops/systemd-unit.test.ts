import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { run } from '../../../src/cli/main';
import { tempDir } from '../../helpers/fixtures';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const UNIT = path.join(ROOT, 'packaging', 'systemd', 'pos-sync-agent.service');

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

describe('systemd user unit', () => {
  const unit = parseUnit(fs.readFileSync(UNIT, 'utf8'));
  const service = unit.get('Service')!;
  const execStart = service.get('ExecStart')![0]!.split(/\s+/);

  it('runs `serve` with a config file, restarts on failure, and is wanted by the user session', () => {
    assert.equal(unit.get('Install')?.get('WantedBy')?.[0], 'default.target');
    assert.equal(service.get('Type')?.[0], 'simple');
    assert.equal(service.get('Restart')?.[0], 'on-failure');
    assert.equal(service.get('UMask')?.[0], '0077');
    assert.ok(path.isAbsolute(execStart[0]!), 'systemd needs an absolute program path');
    assert.ok(execStart[1]!.endsWith('/bin/pos-sync-agent.cjs'));
    assert.deepEqual(execStart.slice(2), ['serve', '--config', '%E/pos-sync-agent/config.json']);
    // No secret on the command line: they come from the secrets file or the EnvironmentFile.
    assert.ok(!execStart.some((a) => /token|password/i.test(a)));
  });

  it('its arguments parse as a real CLI invocation', async () => {
    const args = [...execStart.slice(2).map((a) => a.replace('%E', '/tmp')), '--help'];
    const write = process.stdout.write.bind(process.stdout);
    let printed = '';
    process.stdout.write = ((chunk: string) => {
      printed += chunk;
      return true;
    }) as typeof process.stdout.write;
    try {
      assert.equal(await run(args), 0);
    } finally {
      process.stdout.write = write;
    }
    assert.match(printed, /Usage: pos-sync-agent serve/);
  });

  it('passes systemd-analyze verify (with this checkout as the install folder)', (t) => {
    const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    assert.ok(!probe.error, 'systemd-analyze is not installed: sudo apt-get install -y systemd (npm test installs it when run as root)');
    t.diagnostic(`systemd-analyze ${probe.stdout.split('\n')[0] ?? ''}`);
    const dir = tempDir();
    const copy = path.join(dir, 'pos-sync-agent.service');
    fs.writeFileSync(copy, fs.readFileSync(UNIT, 'utf8').replace('/usr/bin/node /opt/pos-sync-agent', `${process.execPath} ${ROOT}`));
    // A user manager is not available in every CI container; the system verifier checks the same syntax.
    let result = spawnSync('systemd-analyze', ['--user', 'verify', copy], { encoding: 'utf8' });
    if (result.status !== 0 && /Failed to initialize manager|RuntimeDirectory/.test(result.stderr)) {
      result = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
    }
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr.trim(), '', result.stderr);
    // And it does catch a broken unit (so this test can fail).
    fs.writeFileSync(copy, fs.readFileSync(copy, 'utf8').replace(process.execPath, '/nonexistent/node'));
    assert.notEqual(spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' }).status, 0);
  });
});
