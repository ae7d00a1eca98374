import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { machineConfigTrusted, WINDOWS_SERVICE_KEY, WINDOWS_SERVICE_NAME } from '../../src/config/windows-service';

describe('the Windows service gate of the machine-wide configuration (config/windows-service.ts)', () => {
  it('trusts the machine-wide file where only an administrator can make it, without asking Windows', () => {
    for (const platform of ['linux', 'darwin', 'freebsd'] as const) assert.equal(machineConfigTrusted(platform), true, platform);
  });

  it("asks for the service the installer's script registers", () => {
    const script = fs.readFileSync(path.join(__dirname, '..', '..', 'packaging', 'windows', 'pos-sync-agent-service.cmd'), 'utf8');
    const registered = /^set "SERVICE=([^"]+)"/m.exec(script)?.[1];
    assert.equal(WINDOWS_SERVICE_NAME, registered);
    assert.equal(WINDOWS_SERVICE_KEY, `HKLM\\SYSTEM\\CurrentControlSet\\Services\\${registered}`);
  });
});
