import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeCrash } from '../../../src/ops/crash';
import { ConfigError } from '../../../src/errors';
import {
  SID_ADMINISTRATORS,
  SID_SYSTEM,
  TILL_FILES,
  windowsAccountName,
  BROAD_SIDS,
  windowsOwnerArgs,
  windowsPrivateAclArgs,
  windowsPrivateAclSteps,
  windowsRemoveBroadArgs,
  windowsResetContentsArgs,
  windowsTillReaderAclArgs,
} from '../../../src/ops/private-files';

describe('Windows ACLs (icacls arguments; Windows cannot run here)', () => {
  it('a private folder: inheritance removed, full control for the owner, SYSTEM and Administrators only, inherited by its contents', () => {
    assert.deepEqual(windowsPrivateAclArgs('C:\\ProgramData\\pos-sync-agent', { owner: 'SHOP01\\manager', directory: true }), [
      'C:\\ProgramData\\pos-sync-agent',
      '/inheritance:r',
      '/grant:r',
      'SHOP01\\manager:(OI)(CI)F',
      '*S-1-5-18:(OI)(CI)F',
      '*S-1-5-32-544:(OI)(CI)F',
      '/Q',
    ]);
  });

  it('a private file: the same grants, without inheritance flags', () => {
    const args = windowsPrivateAclArgs('C:\\x\\agent.db', { owner: 'manager', directory: false });
    assert.deepEqual(args.slice(1), ['/inheritance:r', '/grant:r', 'manager:F', `${SID_SYSTEM}:F`, `${SID_ADMINISTRATORS}:F`, '/Q']);
    // Everyone, Users and Authenticated Users are never granted anything.
    assert.ok(!args.some((a) => /Everyone|Users|S-1-1-0|S-1-5-11|S-1-5-32-545/.test(a)));
  });

  it("with the grants: the agent's account made the owner, broad grants on the folder and entries on its contents dropped", () => {
    assert.deepEqual(windowsOwnerArgs('C:\\ProgramData\\pos-sync-agent\\data', 'NT AUTHORITY\\LOCAL SERVICE'), ['C:\\ProgramData\\pos-sync-agent\\data', '/setowner', 'NT AUTHORITY\\LOCAL SERVICE', '/Q']);
    // The folder itself is never reset (it would inherit its parent's entries until made private again): its contents are.
    assert.deepEqual(windowsResetContentsArgs('C:\\data'), ['C:\\data\\*', '/reset', '/T', '/C', '/Q']);
    assert.deepEqual(windowsRemoveBroadArgs('C:\\data'), ['C:\\data', '/remove:g', '*S-1-1-0', '*S-1-5-11', '*S-1-5-32-545', '*S-1-5-32-546', '*S-1-5-4', '/Q']);
    assert.deepEqual([...BROAD_SIDS].sort(), ['*S-1-1-0', '*S-1-5-11', '*S-1-5-32-545', '*S-1-5-32-546', '*S-1-5-4'].sort(), 'Everyone, Authenticated Users, Users, Guests, INTERACTIVE');
  });

  it('well-known SIDs, not names that change with the language of Windows', () => {
    assert.equal(SID_SYSTEM, '*S-1-5-18');
    assert.equal(SID_ADMINISTRATORS, '*S-1-5-32-544');
  });

  it("the till's reader gets read (R) on one file, added to the private ACL", () => {
    assert.deepEqual(windowsTillReaderAclArgs('C:\\data\\pos-sync.db', 'SHOP01\\TillUsers'), ['C:\\data\\pos-sync.db', '/grant', 'SHOP01\\TillUsers:(R)', '/Q']);
    assert.deepEqual(TILL_FILES, ['pos-sync.db', 'pos-sync.db-wal', 'pos-sync.db-shm']);
  });

  it("the till reader's grants are given back right after the reset of the data folder's contents drops them", () => {
    const files = ['C:\\data\\pos-sync.db', 'C:\\data\\pos-sync.db-wal'];
    const steps = windowsPrivateAclSteps('C:\\data', { owner: 'SHOP01\\agent', hasContents: true, tillReader: { reader: 'SHOP01\\TillUsers', files } });
    assert.deepEqual(
      steps.map((s) => s.args),
      [
        windowsOwnerArgs('C:\\data', 'SHOP01\\agent'),
        windowsPrivateAclArgs('C:\\data', { owner: 'SHOP01\\agent', directory: true }),
        windowsRemoveBroadArgs('C:\\data'),
        windowsResetContentsArgs('C:\\data'),
        windowsTillReaderAclArgs(files[0]!, 'SHOP01\\TillUsers'),
        windowsTillReaderAclArgs(files[1]!, 'SHOP01\\TillUsers'),
      ],
    );
    // Making the folder private and giving the till its files stop start-up when refused; the rest is said and passed over.
    assert.deepEqual(
      steps.map((s) => (s.onFailure === 'stop' ? 'stop' : 'warn')),
      ['warn', 'stop', 'warn', 'warn', 'stop', 'stop'],
    );
    // No reader (or another folder than the data folder): nothing is granted; an empty folder has no contents to reset.
    const plain = windowsPrivateAclSteps('C:\\logs', { owner: 'agent', hasContents: false, tillReader: null });
    assert.deepEqual(
      plain.map((s) => s.args[1]),
      ['/setowner', '/inheritance:r', '/remove:g'],
    );
    assert.ok(!plain.some((s) => s.args.some((a) => a.endsWith(':(R)'))));
  });

  it('names the account as DOMAIN\\user when Windows says the domain', () => {
    assert.equal(windowsAccountName({ USERDOMAIN: 'SHOP01' }, 'manager'), 'SHOP01\\manager');
    assert.equal(windowsAccountName({}, 'manager'), 'manager');
  });
});

describe('crash log line', () => {
  it('says what and where, never the message (it may hold personal data)', () => {
    const err = Object.assign(new TypeError('cannot read jane@example.com NI QQ123456C'), { code: 'ERR_X' });
    const text = describeCrash('uncaught exception', err);
    assert.match(text, /^uncaught exception: TypeError \(code ERR_X\); message withheld/);
    assert.match(text, /\n {2}at /);
    assert.ok(!text.includes('jane@example.com') && !text.includes('QQ123456C'));
    assert.match(describeCrash('unhandled rejection', 'a string with jane@example.com'), /^unhandled rejection: a non-Error value was thrown \(string\); message withheld$/);
  });
});

describe('ConfigError lists every problem', () => {
  it('one problem reads as before; several are listed together', () => {
    assert.equal(new ConfigError('admin.port', 'bad').message, 'invalid configuration: admin.port: bad');
    const many = ConfigError.of([
      { field: 'admin.port', message: 'a' },
      { field: 'dataDir', message: 'b' },
    ]);
    assert.equal(many.field, 'admin.port');
    assert.equal(many.message, 'invalid configuration (2 problems):\n  - admin.port: a\n  - dataDir: b');
    assert.throws(() => ConfigError.of([]));
  });
});
