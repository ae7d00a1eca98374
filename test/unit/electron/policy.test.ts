import { LOGIN_PARAM } from '../../../src/admin/security';
import { severityOf } from '../../../src/admin/summary';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  LOGIN_LINK_PARAM,
  SECURE_WEB_PREFERENCES,
  acceptLoginLink,
  adminOriginOf,
  agentProcessEntry,
  desktopConfigOption,
  isAllowedNavigation,
  loginLinkOrigin,
  permissionDecision,
  startHidden,
  trayState,
  windowOpenDecision,
} from '../../../src/electron/policy';

const ORIGIN = 'http://127.0.0.1:8780';

describe('adminOriginOf', () => {
  it('takes the origin of a loopback http URL and drops the token', () => {
    assert.equal(adminOriginOf('http://127.0.0.1:8780/?token=abc'), ORIGIN);
    assert.equal(adminOriginOf('http://[::1]:9000/'), 'http://[::1]:9000');
  });
  it('refuses anything that is not loopback http', () => {
    for (const u of ['https://127.0.0.1:8780/', 'http://example.com:8780/', 'file:///C:/x.html', 'http://10.0.0.1:8780/']) assert.throws(() => adminOriginOf(u), u);
  });
  it('takes any 127.0.0.0/8 address, as the agent binds a fresh one at each start, in the form the URL parser writes', () => {
    assert.equal(adminOriginOf('http://127.83.4.201:8780/?login=abc'), 'http://127.83.4.201:8780');
    assert.equal(adminOriginOf('http://127.255.255.254:1/'), 'http://127.255.255.254:1');
    // Short and numeric forms are normalised by the parser first.
    assert.equal(adminOriginOf('http://127.1:8780/'), ORIGIN);
    assert.equal(adminOriginOf('http://2130706433:8780/'), ORIGIN);
  });
  it('refuses names (localhost, look-alikes) and other addresses: only what the agent itself links to', () => {
    for (const u of ['http://localhost:8780/', 'http://127.0.0.1.evil.example:8780/', 'http://128.0.0.1:8780/', 'http://[::ffff:127.0.0.1]:8780/', 'http://[::2]:8780/', 'http://0.0.0.0:8780/']) {
      assert.throws(() => adminOriginOf(u), u);
    }
  });
});

describe('loginLinkOrigin', () => {
  it('is the origin of a loopback link carrying a one-time code', () => {
    assert.equal(loginLinkOrigin('http://127.83.4.201:8780/?login=abc'), 'http://127.83.4.201:8780');
    assert.equal(loginLinkOrigin(`${ORIGIN}/?login=abc`), ORIGIN);
    assert.equal(loginLinkOrigin('http://[::1]:8780/?login=abc'), 'http://[::1]:8780');
  });
  it('is null for a plain address of the port (no code), an empty code, and anything not loopback http', () => {
    for (const u of [`${ORIGIN}/`, `${ORIGIN}/?login=`, `${ORIGIN}/?token=abc`, `${ORIGIN}/#login=abc`, 'https://127.0.0.1:8780/?login=abc', 'http://evil.example/?login=abc', 'data:text/html,?login=abc', 'not a url', '']) {
      assert.equal(loginLinkOrigin(u), null, u);
    }
  });
  it('names the same query parameter as the agent that mints the codes', () => {
    assert.equal(LOGIN_LINK_PARAM, LOGIN_PARAM);
  });
});

describe('acceptLoginLink', () => {
  it('loads a fresh login link only on the origin announced at ready', () => {
    assert.equal(acceptLoginLink(`${ORIGIN}/?login=abc`, ORIGIN), true);
    assert.equal(acceptLoginLink('http://127.0.0.1:8781/?login=abc', ORIGIN), false);
    assert.equal(acceptLoginLink('http://evil.example/?login=abc', ORIGIN), false);
    assert.equal(acceptLoginLink('not a url', ORIGIN), false);
    assert.equal(acceptLoginLink(`${ORIGIN}/?login=abc`, null), false);
  });
  it('follows the origin the agent announced at its last start, and wants a one-time code in the link', () => {
    const next = 'http://127.9.200.17:8780';
    assert.equal(acceptLoginLink(`${next}/?login=abc`, next), true);
    assert.equal(acceptLoginLink(`${ORIGIN}/?login=abc`, next), false);
    assert.equal(acceptLoginLink(`${next}/`, next), false);
  });
});

describe('isAllowedNavigation', () => {
  it('allows only our own origin', () => {
    for (const u of [`${ORIGIN}/`, `${ORIGIN}/#deliveries`, `${ORIGIN}/?token=x`, `${ORIGIN}/api/payloads/inbox/1`]) assert.equal(isAllowedNavigation(u, ORIGIN), true, u);
    for (const u of [
      'http://127.0.0.1:8781/',
      'http://localhost:8780/',
      'https://127.0.0.1:8780/',
      'http://evil.example/',
      'https://support.example.com/',
      'file:///etc/passwd',
      'data:text/html,<script>alert(1)</script>',
      'javascript:alert(1)',
      'about:blank',
      'http://127.0.0.1:8780@evil.example/',
      'http://127.83.4.201:8780/',
      'not a url',
      '',
    ]) {
      assert.equal(isAllowedNavigation(u, ORIGIN), false, u);
    }
  });
});

describe('windowOpenDecision', () => {
  it('denies every new window, our own origin included', () => {
    for (const u of [`${ORIGIN}/`, 'https://example.com', 'javascript:alert(1)', '']) assert.deepEqual(windowOpenDecision(u), { action: 'deny' });
  });
});

describe('permissionDecision', () => {
  it('denies every permission except clipboard writes from our origin', () => {
    for (const p of ['media', 'geolocation', 'notifications', 'midi', 'midiSysex', 'pointerLock', 'fullscreen', 'openExternal', 'clipboard-read', 'display-capture', 'hid', 'serial', 'usb', 'unknown']) {
      assert.equal(permissionDecision(p, `${ORIGIN}/`, ORIGIN), false, p);
    }
    assert.equal(permissionDecision('clipboard-sanitized-write', `${ORIGIN}/#settings`, ORIGIN), true);
    assert.equal(permissionDecision('clipboard-sanitized-write', 'http://evil.example/', ORIGIN), false);
    assert.equal(permissionDecision('clipboard-sanitized-write', 'data:text/html,x', ORIGIN), false);
  });
});

describe('SECURE_WEB_PREFERENCES', () => {
  it('isolates and sandboxes the window without Node', () => {
    assert.equal(SECURE_WEB_PREFERENCES.contextIsolation, true);
    assert.equal(SECURE_WEB_PREFERENCES.sandbox, true);
    assert.equal(SECURE_WEB_PREFERENCES.nodeIntegration, false);
    assert.equal(SECURE_WEB_PREFERENCES.nodeIntegrationInSubFrames, false);
    assert.equal(SECURE_WEB_PREFERENCES.webSecurity, true);
    assert.equal(SECURE_WEB_PREFERENCES.webviewTag, false);
    assert.equal('preload' in SECURE_WEB_PREFERENCES, false);
  });
});

describe('trayState', () => {
  it('renders the severity model: its light and headline; grey only while the agent starts', () => {
    assert.deepEqual(trayState(null, { phase: 'starting' }), { colour: 'grey', tooltip: 'POS Sync Agent — starting' });
    assert.deepEqual(trayState({ light: 'green', headline: 'The till is up to date.' }), { colour: 'green', tooltip: 'POS Sync Agent — The till is up to date.' });
    assert.equal(trayState({ light: 'red', headline: 'x' }).colour, 'red');
    assert.ok(trayState({ light: 'amber', headline: 'y'.repeat(300) }).tooltip.length <= 127);
  });

  it('is red, saying why, once the agent process is down', () => {
    const down = trayState(null, { phase: 'down', since: '2027-01-04T09:58:00Z', why: 'the agent process stopped' });
    assert.equal(down.colour, 'red');
    assert.match(down.tooltip, /^POS Sync Agent — The agent cannot be reached since .* \(the agent process stopped\)/);
  });

  it('takes an expired right to work from the model as red', () => {
    const s = severityOf({ generatedAt: '', paused: false, gapAlertMinutes: 30, baselineSettleSeconds: 60, locations: [], alerts: [], staff: { expired: 1, expiringSoon: 0, windowDays: 60 } }, new Date(), (iso: string) => iso);
    assert.equal(trayState(s).colour, 'red');
  });
});

describe('desktopConfigOption and startHidden', () => {
  it('takes --config FILE or --config=FILE from the command line, else none (the site rule decides: config/site.ts)', () => {
    assert.equal(desktopConfigOption(['electron', '.', '--config', 'a.json']), 'a.json');
    assert.equal(desktopConfigOption(['app', '--config=a2.json']), 'a2.json');
    assert.equal(desktopConfigOption(['app', '--hidden']), null);
    assert.equal(desktopConfigOption(['app', '--config=']), null);
  });
  it('starts hidden only when the login item says so', () => {
    assert.equal(startHidden(['app', '--hidden']), true);
    assert.equal(startHidden(['app']), false);
  });
});

describe('electron imports', () => {
  it('nothing outside src/electron imports electron', () => {
    const root = path.resolve(__dirname, '..', '..', '..', 'src');
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
          if (full !== path.join(root, 'electron')) walk(full);
        } else if (entry.name.endsWith('.ts') && /from ['"]electron['"]|require\(['"]electron['"]\)|import\(['"]electron['"]\)/.test(fs.readFileSync(full, 'utf8'))) {
          offenders.push(path.relative(root, full));
        }
      }
    };
    walk(root);
    assert.deepEqual(offenders, []);
  });
  it('the pure policy module does not import electron either (it runs under plain Node here)', () => {
    const text = fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'src', 'electron', 'policy.ts'), 'utf8');
    assert.doesNotMatch(text, /from ['"]electron['"]/);
  });
});

describe('agentProcessEntry', () => {
  const mainDir = path.join('/opt', 'app', 'dist', 'src', 'electron');
  it('runs the agent process from its bundle beside the worker threads\' bundles when the build made it', () => {
    const bundled = path.join('/opt', 'app', 'dist', 'agent', 'agent-process.js');
    assert.equal(agentProcessEntry(mainDir, (f) => f === bundled), bundled);
  });
  it('falls back to the compiled module beside main.js in a tree tsc alone built', () => {
    assert.equal(agentProcessEntry(mainDir, () => false), path.join(mainDir, 'agent-process.js'));
  });
  it('finds the bundle this checkout\'s build wrote, from where main.js is', () => {
    const root = path.resolve(__dirname, '..', '..', '..');
    const entry = agentProcessEntry(path.join(root, 'dist', 'src', 'electron'), fs.existsSync);
    assert.equal(entry, path.join(root, 'dist', 'agent', 'agent-process.js'), 'npm run build writes dist/agent/agent-process.js');
  });
});
