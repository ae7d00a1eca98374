import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { howToStopAgent } from '../../../src/ops/instance';

/** "One agent per data folder" says how to stop the running one in the words of the PC it runs on. */
describe('how to stop the agent, per platform', () => {
  it('on Windows: the tray, the service with net stop, Ctrl+C; nothing from Linux', () => {
    const hint = howToStopAgent('win32');
    assert.match(hint, /quit the desktop app from its tray icon/);
    assert.match(hint, /`net stop pos-sync-agent` in a Command Prompt run as administrator/);
    assert.match(hint, /Ctrl\+C/);
    assert.doesNotMatch(hint, /systemctl|sudo/);
  });

  it('on Linux: the system service (the packaged unit is not a --user one)', () => {
    const hint = howToStopAgent('linux');
    assert.match(hint, /`sudo systemctl stop pos-sync-agent`/);
    assert.doesNotMatch(hint, /--user|net stop/);
  });

  it('elsewhere: no service manager is named', () => {
    assert.doesNotMatch(howToStopAgent('darwin'), /systemctl|net stop/);
  });
});
