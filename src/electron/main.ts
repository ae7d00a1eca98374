import fs from 'node:fs';
import path from 'node:path';
import { app, BrowserWindow, dialog, Menu, nativeImage, shell, Tray, type NativeImage } from 'electron';
import electronLog from 'electron-log/main';
import { AdminService } from '../admin/service';
import type { UiSettings } from '../admin/settings';
import type { Agent } from '../agent';
import { agentServices } from '../cli/services';
import { defaultDataDir } from '../config/load';
import type { Config } from '../config/schema';
import { describeError } from '../errors';
import { configureLogging, redactor, type Logger } from '../log';
import { installCrashHandlers } from '../ops/crash';
import { restrictUmask } from '../ops/private-files';
import { startAgent as startCheckedAgent, type StartedAgent } from '../ops/startup';
import { EnvSecretStore, LayeredSecretStore, loadConfigWithSecrets, secretsFileFor } from '../ops/secrets';
import { hardenApp, safeUrl } from './harden';
import { HIDDEN_ARG, SECURE_WEB_PREFERENCES, adminOriginOf, desktopConfigFile, startHidden, trayState, type TrayColour } from './policy';
import { SafeStorageSecretStore } from './safe-storage-secrets';

/**
 * The desktop shell: one instance, a tray icon showing the status colour, and a window that shows the
 * admin server's page. Everything else (sync, API, UI) is the same agent that runs headless.
 */

const ASSETS = path.join(__dirname, '..', '..', '..', 'assets');
const TRAY_REFRESH_MS = 5_000;

let agent: Agent | null = null;
let started: StartedAgent | null = null;
let admin: AdminService | null = null;
let window: BrowserWindow | null = null;
let tray: Tray | null = null;
let quitting = false;
let log: Logger = electronLog;
let logDir: string | null = null;
let adminOrigin: string | null = null;

function icon(name: string): NativeImage {
  return nativeImage.createFromPath(path.join(ASSETS, name));
}

const trayIcons = new Map<TrayColour, NativeImage>();
function trayIcon(colour: TrayColour): NativeImage {
  let image = trayIcons.get(colour);
  if (!image) {
    image = icon(`tray-${colour}.png`);
    trayIcons.set(colour, image);
  }
  return image;
}

function applyStartAtLogin(settings: UiSettings): void {
  // Only a packaged app registers itself: a development run would register the bare electron binary.
  if (!app.isPackaged) return;
  app.setLoginItemSettings({ openAtLogin: settings.startAtLogin, args: [HIDDEN_ARG] });
}

function showWindow(): void {
  if (!admin?.loginUrl) return;
  if (window && !window.isDestroyed()) {
    if (window.isMinimized()) window.restore();
    window.show();
    window.focus();
    return;
  }
  window = new BrowserWindow({
    width: 1280,
    height: 800,
    minWidth: 1000,
    minHeight: 640,
    show: false,
    title: 'POS Sync Agent',
    icon: icon('icon.png'),
    autoHideMenuBar: true,
    webPreferences: { ...SECURE_WEB_PREFERENCES, devTools: !app.isPackaged },
  });
  window.once('ready-to-show', () => window?.show());
  // Closing hides to the tray; the agent keeps receiving updates. Quit is in the tray menu.
  window.on('close', (event) => {
    if (quitting) return;
    event.preventDefault();
    window?.hide();
  });
  window.webContents.on('render-process-gone', (_e, details) => log.error(`[shell] window renderer gone: ${details.reason}`));
  void window.loadURL(admin.loginUrl).catch((err: unknown) => log.error(`[shell] cannot load ${safeUrl(admin?.loginUrl ?? '')}: ${describeError(err)}`));
}

function buildTrayMenu(): Menu {
  const paused = agent?.isPaused ?? false;
  const settings = admin?.settings;
  return Menu.buildFromTemplate([
    { label: 'Open status window', click: showWindow },
    { type: 'separator' },
    {
      label: paused ? 'Resume applying updates' : 'Pause applying updates',
      click: () => {
        agent?.setPaused(!paused);
        refreshTray();
      },
    },
    { label: 'Open logs folder', enabled: logDir !== null, click: () => void shell.openPath(logDir ?? '') },
    {
      label: 'Start at login',
      type: 'checkbox',
      checked: settings?.startAtLogin ?? false,
      enabled: settings !== null && settings !== undefined,
      click: (item) => {
        // The same settings file the window writes; the change comes back through onSettingsChanged.
        admin?.updateSettings({ startAtLogin: item.checked });
      },
    },
    { type: 'separator' },
    {
      label: 'Quit',
      click: () => {
        quitting = true;
        app.quit();
      },
    },
  ]);
}

let lastTray = '';
function refreshTray(): void {
  if (!tray) return;
  const state = trayState(admin?.summary() ?? null, agent?.isPaused ?? false);
  const key = `${state.colour}|${state.tooltip}|${agent?.isPaused}|${admin?.settings?.startAtLogin}`;
  if (key === lastTray) return;
  lastTray = key;
  tray.setImage(trayIcon(state.colour));
  tray.setToolTip(state.tooltip);
  tray.setContextMenu(buildTrayMenu());
}

function loadConfiguration(): Readonly<Config> {
  const file = desktopConfigFile(process.argv, process.env, path.join(defaultDataDir(), 'config.json'), (f) => fs.existsSync(f));
  const options = { file };
  const store = new LayeredSecretStore(new EnvSecretStore(process.env), new SafeStorageSecretStore(secretsFileFor(options)));
  return loadConfigWithSecrets({ ...options, store }).config;
}

async function startAgent(): Promise<void> {
  const config = loadConfiguration();
  logDir = config.log.dir ?? path.join(config.dataDir, 'logs');
  log = configureLogging({ dir: logDir, level: config.log.level, maxFileBytes: config.log.maxFileBytes, console: !app.isPackaged }, electronLog);
  log.info(`[shell] POS Sync Agent ${app.getVersion()} starting (Electron ${process.versions.electron}); data in ${config.dataDir}`);
  if (!config.admin.enabled) throw new Error('the desktop app needs the status window: set admin.enabled to true (or run the agent headless with `pos-sync-agent serve`)');
  const desktopAdmin = new AdminService(log, {
    shell: 'electron',
    onSettingsChanged: (settings) => {
      applyStartAtLogin(settings);
      lastTray = '';
      refreshTray();
    },
  });
  // The same services `serve` runs, with the status window's service in its desktop form.
  const services = agentServices(config, log).map((s) => (s.name === 'admin' ? desktopAdmin : s));
  // Checked, locked and started all or nothing, as `serve` does (ops/startup.ts).
  started = await startCheckedAgent(config, log, services);
  agent = started.agent;
  admin = desktopAdmin;
  adminOrigin = adminOriginOf(admin.url!);
  const settings = admin.settings;
  if (settings) applyStartAtLogin(settings);
}

async function stopAgent(): Promise<void> {
  const running = started;
  started = null;
  agent = null;
  admin = null;
  if (running) await running.stop();
}

function main(): void {
  // Every file the app writes (databases, logs, backups, tokens) is owner-only.
  restrictUmask();
  if (!app.requestSingleInstanceLock()) {
    // Another copy is running: it shows its window (second-instance below) and this one leaves.
    app.quit();
    return;
  }
  app.enableSandbox();
  app.on('second-instance', showWindow);
  hardenApp(() => adminOrigin, { error: (...a) => log.error(...a), warn: (...a) => log.warn(...a), info: (...a) => log.info(...a), verbose: (...a) => log.verbose(...a), debug: (...a) => log.debug(...a) });
  // The tray keeps the app alive with no window open.
  app.on('window-all-closed', () => undefined);
  app.on('before-quit', (event) => {
    quitting = true;
    if (agent) {
      event.preventDefault();
      void stopAgent()
        .catch((err: unknown) => log.error(`[shell] stopping the agent: ${describeError(err)}`))
        .finally(() => app.quit());
    }
  });
  // A crash must not leave this process running the database writer: log it, then start a clean
  // copy of the app (unless it crashed within a minute of starting, which would only loop) and exit.
  const launchedAt = Date.now();
  installCrashHandlers({
    log,
    beforeExit: () => {
      if (Date.now() - launchedAt > 60_000) app.relaunch({ args: [...process.argv.slice(1).filter((a) => a !== HIDDEN_ARG), HIDDEN_ARG] });
    },
    exit: (code) => app.exit(code),
  });

  void app.whenReady().then(async () => {
    Menu.setApplicationMenu(null);
    tray = new Tray(trayIcon('grey'));
    tray.setToolTip('POS Sync Agent — starting');
    tray.on('click', showWindow);
    tray.setContextMenu(buildTrayMenu());
    try {
      await startAgent();
    } catch (err) {
      const message = redactor.redact(describeError(err));
      log.error(`[shell] the agent could not start: ${message}`);
      dialog.showErrorBox('POS Sync Agent could not start', `${message}\n\nLogs: ${logDir ?? '(not configured yet)'}`);
      quitting = true;
      app.exit(1);
      return;
    }
    refreshTray();
    setInterval(refreshTray, TRAY_REFRESH_MS).unref();
    if (!startHidden(process.argv)) showWindow();
  });
}

main();
