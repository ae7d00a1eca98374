import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  configArgument,
  describeSite,
  machineConfigFile,
  machineDataDir,
  resolveSiteConfig,
  shellWord,
  siteForFile,
  userConfigFiles,
  userDataDir,
} from '../../src/config/site';

const LINUX = { platform: 'linux' as const, home: '/home/manager', cwd: '/srv' };
const WINDOWS = {
  platform: 'win32' as const,
  home: 'C:\\Users\\manager',
  cwd: 'C:\\Users\\manager',
  env: { ProgramData: 'C:\\ProgramData', APPDATA: 'C:\\Users\\manager\\AppData\\Roaming' },
};

describe('the site configuration every entry point finds (config/site.ts)', () => {
  it('documents one file per OS and mode', () => {
    assert.equal(machineConfigFile({}, 'linux'), '/etc/pos-sync-agent/config.json');
    assert.equal(machineDataDir({}, 'linux'), '/var/lib/pos-sync-agent');
    assert.deepEqual(userConfigFiles({}, 'linux', '/home/m'), ['/home/m/.config/pos-sync-agent/config.json', '/home/m/.local/share/pos-sync-agent/config.json']);
    assert.deepEqual(userConfigFiles({ XDG_CONFIG_HOME: '/x' }, 'linux', '/home/m')[0], '/x/pos-sync-agent/config.json');
    assert.equal(machineConfigFile(WINDOWS.env, 'win32'), 'C:\\ProgramData\\pos-sync-agent\\config.json');
    assert.equal(machineDataDir(WINDOWS.env, 'win32'), 'C:\\ProgramData\\pos-sync-agent\\data');
    assert.deepEqual(userConfigFiles(WINDOWS.env, 'win32', WINDOWS.home), ['C:\\Users\\manager\\AppData\\Roaming\\pos-sync-agent\\config.json']);
    assert.equal(userDataDir(WINDOWS.env, 'win32', WINDOWS.home), 'C:\\Users\\manager\\AppData\\Roaming\\pos-sync-agent');
  });

  it('takes --config, then POS_SYNC_CONFIG, then the machine-wide file, then the user\'s, then defaults', () => {
    const all = (): boolean => true;
    const env = { POS_SYNC_CONFIG: '/etc/other.json' };
    assert.deepEqual(resolveSiteConfig({ ...LINUX, env, option: 'site.json', exists: all }).file, '/srv/site.json');
    assert.equal(resolveSiteConfig({ ...LINUX, env, option: 'site.json', exists: all }).source, 'option');
    assert.equal(resolveSiteConfig({ ...LINUX, env, exists: all }).source, 'environment');
    assert.equal(resolveSiteConfig({ ...LINUX, env: {}, exists: all }).source, 'machine');
    const userOnly = resolveSiteConfig({ ...LINUX, env: {}, exists: (f) => f.startsWith('/home/') });
    assert.equal(userOnly.source, 'user');
    assert.equal(userOnly.file, '/home/manager/.config/pos-sync-agent/config.json');
    const legacy = resolveSiteConfig({ ...LINUX, env: {}, exists: (f) => f === '/home/manager/.local/share/pos-sync-agent/config.json' });
    assert.equal(legacy.source, 'user', "the 0.2 desktop app's file still counts");
    const none = resolveSiteConfig({ ...LINUX, env: {}, exists: () => false });
    assert.deepEqual(none, { file: null, source: 'defaults', machine: false, defaultDataDir: '/home/manager/.local/share/pos-sync-agent' });
    assert.equal(resolveSiteConfig({ ...WINDOWS, exists: all }).file, 'C:\\ProgramData\\pos-sync-agent\\config.json');
  });

  it("passes over a machine-wide file that is not trusted (Windows without the service), saying so", () => {
    const machine = 'C:\\ProgramData\\pos-sync-agent\\config.json';
    const user = 'C:\\Users\\manager\\AppData\\Roaming\\pos-sync-agent\\config.json';
    let asked = 0;
    const untrusted = (): boolean => {
      asked += 1;
      return false;
    };
    const both = resolveSiteConfig({ ...WINDOWS, exists: (f) => f === machine || f === user, machineTrusted: untrusted });
    assert.deepEqual([both.source, both.file, both.machine, both.ignoredMachineFile], ['user', user, false, machine]);
    assert.equal(describeSite(both), `${user} (this user's); ${machine} ignored: no pos-sync-agent service is registered on this PC`);
    const alone = resolveSiteConfig({ ...WINDOWS, exists: (f) => f === machine, machineTrusted: untrusted });
    assert.deepEqual([alone.source, alone.file, alone.ignoredMachineFile], ['defaults', null, machine]);
    assert.equal(alone.defaultDataDir, 'C:\\Users\\manager\\AppData\\Roaming\\pos-sync-agent', 'not the service\'s data folder');
    // Trusted, it is the site as before; with no machine-wide file the question is never asked.
    assert.equal(resolveSiteConfig({ ...WINDOWS, exists: (f) => f === machine, machineTrusted: () => true }).source, 'machine');
    asked = 0;
    assert.equal(resolveSiteConfig({ ...WINDOWS, exists: (f) => f === user, machineTrusted: untrusted }).ignoredMachineFile, undefined);
    assert.equal(asked, 0);
    // Named on purpose (--config, POS_SYNC_CONFIG), the file is used: the service itself starts that way.
    assert.equal(resolveSiteConfig({ ...WINDOWS, option: machine, exists: () => true, machineTrusted: untrusted }).machine, true);
  });

  it('keeps data in the machine-wide folder only for the machine-wide file, however it was named', () => {
    for (const site of [
      resolveSiteConfig({ ...LINUX, env: {}, exists: (f) => f === '/etc/pos-sync-agent/config.json' }),
      resolveSiteConfig({ ...LINUX, env: {}, option: '/etc/pos-sync-agent/config.json', exists: () => false }),
      resolveSiteConfig({ ...LINUX, cwd: '/etc/pos-sync-agent', env: { POS_SYNC_CONFIG: 'config.json' }, exists: () => false }),
    ]) {
      assert.equal(site.machine, true);
      assert.equal(site.defaultDataDir, '/var/lib/pos-sync-agent');
    }
    const user = resolveSiteConfig({ ...LINUX, env: {}, option: '/srv/site.json', exists: () => false });
    assert.equal(user.machine, false);
    assert.equal(user.defaultDataDir, '/home/manager/.local/share/pos-sync-agent');
    assert.equal(siteForFile('/etc/pos-sync-agent/config.json', {}, 'linux').defaultDataDir, '/var/lib/pos-sync-agent');
  });

  it('says how it was found', () => {
    assert.equal(describeSite(resolveSiteConfig({ ...LINUX, env: {}, option: 'a.json', exists: () => false })), '/srv/a.json (--config)');
    assert.equal(describeSite(resolveSiteConfig({ ...LINUX, env: { POS_SYNC_CONFIG: '/b.json' }, exists: () => false })), '/b.json (POS_SYNC_CONFIG)');
    assert.equal(describeSite(resolveSiteConfig({ ...LINUX, env: {}, exists: () => false })), 'none: built-in defaults');
  });

  it('a printed command carries --config only when a plain shell would find another file', () => {
    const machineExists = (f: string): boolean => f === '/etc/pos-sync-agent/config.json';
    const viaOption = resolveSiteConfig({ ...LINUX, env: {}, option: '/etc/pos-sync-agent/config.json', exists: machineExists });
    assert.equal(configArgument(viaOption, { ...LINUX, env: {}, exists: machineExists }), '', 'the plain command finds it too');
    const other = resolveSiteConfig({ ...LINUX, env: {}, option: '/srv/my site.json', exists: machineExists });
    assert.equal(configArgument(other, { ...LINUX, env: {}, exists: machineExists }), " --config '/srv/my site.json'");
    const fromEnv = resolveSiteConfig({ ...LINUX, env: { POS_SYNC_CONFIG: '/srv/a.json' }, exists: () => false });
    assert.equal(configArgument(fromEnv, { ...LINUX, env: { POS_SYNC_CONFIG: '/srv/a.json' }, exists: () => false }), ' --config /srv/a.json', 'another shell has no POS_SYNC_CONFIG');
    assert.equal(configArgument(resolveSiteConfig({ ...LINUX, env: {}, exists: () => false }), { ...LINUX, env: {}, exists: () => false }), '');
  });

  it('quotes a path into one shell word that the shell gives back unchanged', () => {
    assert.equal(shellWord('C:\\Program Files\\x.json', 'win32'), '"C:\\Program Files\\x.json"');
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', ' ', "'", '"', '$', '\\', '/', '*', ';', 'é') }), (word) => {
        const quoted = shellWord(word || 'x', 'linux');
        // POSIX single quotes: the word is inside them with ' written as '\''.
        if (quoted !== (word || 'x')) {
          assert.ok(quoted.startsWith("'") && quoted.endsWith("'"));
          assert.equal(quoted.slice(1, -1).replace(/'\\''/g, "'"), word);
        }
      }),
    );
  });
});
