import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accessHint, clientTrayState, isRefusal, type ServiceView } from '../../../src/electron/service-client';

/** The tray of the desktop app in client mode (service-client.ts): rendered from what the service says. */

function status(light: 'green' | 'amber' | 'red', headline: string, extra: { paused?: boolean; label?: string } = {}): ServiceView {
  return {
    kind: 'status',
    summary: {
      generatedAt: '2026-11-25T10:00:00.000Z',
      light,
      label: extra.label ?? (light === 'green' ? 'Up to date' : 'Attention'),
      headline,
      reasons: [],
      paused: extra.paused ?? false,
      pausedBy: null,
      pausedAt: null,
      adminUrl: 'http://127.0.0.1:8780/',
    },
  };
}

describe('client tray (service-client.ts)', () => {
  it('takes the colour and headline from the service\'s severity model, and says it shows the service', () => {
    for (const light of ['green', 'amber', 'red'] as const) {
      const tray = clientTrayState(status(light, `headline ${light}`));
      assert.equal(tray.colour, light);
      assert.equal(tray.tooltip, `POS Sync Agent (service) — headline ${light}`);
      assert.match(tray.lines[0]!, /^Service agent: /);
    }
  });

  it('points to the window for pause and resume while the service is paused', () => {
    const tray = clientTrayState(status('red', 'Applying updates is paused by ana', { paused: true, label: 'Paused' }));
    assert.equal(tray.colour, 'red');
    assert.equal(tray.lines[0], 'Service agent: Paused (pause or resume in the status window)');
  });

  it('keeps the tooltip within what Windows shows (127 characters)', () => {
    const tray = clientTrayState(status('amber', 'x'.repeat(300)));
    assert.equal(tray.tooltip.length, 127);
    assert.ok(tray.tooltip.endsWith('…'));
  });

  it('refused the channel while the service runs: grey, never green, with one line on how to get access', () => {
    const win = clientTrayState({ kind: 'refused', running: true }, 'win32');
    assert.equal(win.colour, 'grey');
    assert.match(win.tooltip, /this account may not see its status/);
    assert.deepEqual(win.lines, ['Connected to the service agent (status not shown to this account)', accessHint('win32')]);
    assert.match(accessHint('win32'), /Run as administrator/);
    const linux = clientTrayState({ kind: 'refused', running: true }, 'linux');
    assert.equal(linux.lines[1], accessHint('linux'));
    assert.match(accessHint('linux'), /sudo pos-sync-agent admin-url/);
  });

  it('a service that does not answer is the model\'s "cannot be reached": red', () => {
    for (const view of [{ kind: 'refused', running: false }, { kind: 'no-channel', running: false }] as const) {
      const tray = clientTrayState(view, 'win32');
      assert.equal(tray.colour, 'red');
      assert.match(tray.tooltip, /^POS Sync Agent \(service\) — The agent cannot be reached/);
      assert.equal(tray.lines[0], 'The service agent does not answer');
    }
    assert.equal(clientTrayState({ kind: 'refused', running: false }, 'win32').lines[1], accessHint('win32'));
    assert.equal(clientTrayState({ kind: 'no-channel', running: false }, 'win32').lines.length, 1);
  });

  it('running without a channel (starting, or a version without these routes): grey, open the window', () => {
    const tray = clientTrayState({ kind: 'no-channel', running: true });
    assert.equal(tray.colour, 'grey');
    assert.match(tray.tooltip, /open the window for its status/);
  });

  it('an error from the service (its storage failing) is red and says so', () => {
    const tray = clientTrayState({ kind: 'failed', message: 'database is locked' });
    assert.equal(tray.colour, 'red');
    assert.match(tray.tooltip, /could not report its state: database is locked/);
  });

  it('before the first answer: grey, looking', () => {
    assert.deepEqual(clientTrayState({ kind: 'looking' }).colour, 'grey');
  });

  it('tells a refusal (permissions) from nothing listening', () => {
    const e = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code });
    assert.equal(isRefusal(e('EACCES')), true);
    assert.equal(isRefusal(e('EPERM')), true);
    for (const code of ['ENOENT', 'ECONNREFUSED', 'ETIMEDOUT']) assert.equal(isRefusal(e(code)), false, code);
  });
});
