import fs from 'node:fs';
import path from 'node:path';
import { app, BrowserWindow, dialog, Menu, nativeImage, safeStorage, shell, Tray, utilityProcess, type NativeImage } from 'electron';
import electronLog from 'electron-log/main';
import type { LoadOptions } from '../config/load';
import { resolveSiteConfig } from '../config/site';
import { machineConfigTrusted } from '../config/windows-service';
import { AppError, ConfigError, describeError } from '../errors';
import { configureLogging, redactor, type Logger } from '../log';
import { installCrashHandlers } from '../ops/crash';
import { dataDirFor, rawConfigInput } from '../ops/secrets';
import { ensureWebhookToken } from '../ops/webhook-token';
import type { ChildMessage, ParentMessage } from './channel';
import { clearWindowSession, hardenApp, safeUrl, windowSession } from './harden';
import { offlinePageUrl, type OfflineReason } from './offline-page';
import { HIDDEN_ARG, SECURE_WEB_PREFERENCES, acceptLoginLink, adminOriginOf, agentProcessEntry, desktopConfigOption, loginLinkOrigin, startHidden, trayState, type TrayColour } from './policy';
import { desktopSecretStore, movePlainSecrets, plainSecretsFile, resolveDesktopSecrets, secretSources, type SafeStorageSecretStore } from './safe-storage-secrets';
import { agentEnvironment } from '../threads/malloc-settings';
import { Supervisor, type ChildHandle } from './supervisor';
import { accessHint, askService, clientTrayState, clientWindowStep, desktopMode, serviceLoginLink, type ClientWindowShows, type ServiceEndpoints, type ServiceView } from './service-client';

/**
 * The desktop shell's main process: one instance, a tray icon showing the status colour, a window that
 * shows the status window's page (only ever by a login link the agent gave: its own process's message,
 * or the service's control channel; else a local page saying the agent is not running), and the
 * supervisor of the agent process (agent-process.ts), which runs the same agent as `pos-sync-agent
 * serve`. This process never opens the database (a test checks its imports): a long SQLite call here
 * would freeze the tray and the window. It owns safeStorage, so it decrypts the secrets for the agent
 * and stores the ones set in the window (channel.ts).
 */

const ASSETS = path.join(__dirname, '..', '..', '..', 'assets');

let window: BrowserWindow | null = null;
let tray: Tray | null = null;
let supervisor: Supervisor | null = null;
let quitting = false;
let log: Logger = electronLog;
/** `log` as it is when called (it is replaced once the log folder is known). */
const shellLog: Logger = { error: (...a) => log.error(...a), warn: (...a) => log.warn(...a), info: (...a) => log.info(...a), verbose: (...a) => log.verbose(...a), debug: (...a) => log.debug(...a) };
let logDir: string | null = null;
/** The window can be opened: the own agent was ready once, or this app is a client of the service. */
let windowAvailable = false;
/** Own agent: the origin its process announced in its last ready message; its login links must be on it. */
let agentOrigin: string | null = null;
/** Own agent: its process is up (ready, and not exited since). */
let agentRunning = false;
/**
 * The origin of the login link the window loaded last: the navigation, permission and request policies
 * follow it (the agent binds a new address at each start). Null while the window shows its local page
 * or is being loaded: then no request of the window leaves.
 */
let windowOrigin: string | null = null;
/** Client mode: what the window shows (service-client.ts clientWindowStep). */
let clientShows: ClientWindowShows = 'nothing';
let status: Extract<ChildMessage, { type: 'status' }> | null = null;
let notRunning: string | null = null;
/** When the agent process last stopped (null: it runs, or has not started yet). */
let downSince: string | null = null;
let appliedStartAtLogin: boolean | null = null;
/** Client mode (service-client.ts): the service agent this app shows instead of running its own. */
let service: ServiceEndpoints | null = null;
let serviceView: ServiceView = { kind: 'looking' };

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

function applyStartAtLogin(enabled: boolean): void {
  // Only a packaged app registers itself: a development run would register the bare electron binary.
  if (!app.isPackaged || appliedStartAtLogin === enabled) return;
  appliedStartAtLogin = enabled;
  app.setLoginItemSettings({ openAtLogin: enabled, args: [HIDDEN_ARG] });
}

function showWindow(): void {
  if (!windowAvailable) return;
  if (window && !window.isDestroyed()) {
    if (window.isMinimized()) window.restore();
    window.show();
    window.focus();
    // A client window on its local page asks the service for a link again.
    if (service && clientShows !== 'page') loadAdmin(window);
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
    // Its own in-memory session (window-session.ts), never the persistent default one.
    webPreferences: { ...SECURE_WEB_PREFERENCES, devTools: !app.isPackaged, session: windowSession(() => windowOrigin, shellLog) },
  });
  window.once('ready-to-show', () => window?.show());
  // Closing hides to the tray; the agent keeps receiving updates. Quit is in the tray menu.
  window.on('close', (event) => {
    if (quitting) return;
    event.preventDefault();
    window?.hide();
  });
  window.webContents.on('render-process-gone', (_e, details) => log.error(`[shell] window renderer gone: ${details.reason}`));
  loadAdmin(window);
}

/** What the window loads: a login link the agent gave (with its origin), or the app's local page. */
type WindowPage = { readonly kind: 'link'; readonly url: string; readonly origin: string } | { readonly kind: 'local'; readonly reason: OfflineReason };

let loadSeq = 0;

/**
 * Every load of the window goes here: the window's session is cleared first (service workers, caches,
 * storage: window-session.ts), and only then is the window's origin set to the link's and the link
 * loaded. A later load supersedes one still clearing. If the session cannot be cleared, no link is loaded.
 */
function loadWindow(target: BrowserWindow, page: WindowPage): void {
  const seq = ++loadSeq;
  // Until the new page loads, nothing the old one asks for leaves (its agent may be gone from the port).
  windowOrigin = null;
  const load = (url: string, what: string): void => {
    target.loadURL(url).catch((err: unknown) => log.error(`[shell] cannot load ${what}: ${describeError(err)}`));
  };
  clearWindowSession(target.webContents.session).then(
    () => {
      if (seq !== loadSeq || target.isDestroyed()) return;
      if (page.kind === 'local') return load(offlinePageUrl(page.reason), 'the local page');
      windowOrigin = page.origin;
      load(page.url, safeUrl(page.url));
    },
    (err: unknown) => {
      log.error(`[shell] cannot clear the status window's session; not loading the status window: ${describeError(err)}`);
      if (seq !== loadSeq || target.isDestroyed()) return;
      load(offlinePageUrl({ kind: 'session-not-cleared' }), 'the local page');
    },
  );
}

/** Own agent: why the window has no link (restarting, or given up on). */
function ownAgentDown(): OfflineReason {
  return supervisor?.state === 'gave-up' ? { kind: 'own-gave-up', detail: notRunning === null ? null : redactor.redact(notRunning) } : { kind: 'own-restarting' };
}

/** Asks the agent for a fresh one-time login link; the window loads it when it arrives (onLoginLink). */
function loadAdmin(target: BrowserWindow): void {
  if (!windowAvailable) return;
  if (service) loadServiceWindow(target, service);
  else if (agentRunning) send({ type: 'login-link-request' });
  else loadWindow(target, { kind: 'local', reason: ownAgentDown() });
}

let linkAsked = false;
let lastLinkProblem: string | null = null;

/**
 * Client mode: a one-time login link from the service over its control channel (service-client.ts),
 * on whatever loopback address the service bound at its start. Without one (refused, or the service
 * stopped or not answering) the window shows the app's local page, never the configured address: the
 * poll (startClient) asks again once the service answers.
 */
function loadServiceWindow(target: BrowserWindow, endpoints: ServiceEndpoints): void {
  if (linkAsked) return;
  linkAsked = true;
  void serviceLoginLink(endpoints, null).then((link) => {
    linkAsked = false;
    if (target.isDestroyed()) return;
    const origin = link.kind === 'link' ? loginLinkOrigin(link.url) : null;
    if (link.kind === 'link' && origin !== null) {
      lastLinkProblem = null;
      clientShows = 'page';
      loadWindow(target, { kind: 'link', url: link.url, origin });
      return;
    }
    if (link.kind === 'refused') {
      clientShows = 'refused';
      loadWindow(target, { kind: 'local', reason: { kind: 'service-refused', hint: accessHint() } });
      return;
    }
    const message = link.kind === 'unavailable' ? link.message : 'not a login link';
    // Asked again at every poll while the service runs without giving one: logged when it changes.
    if (message !== lastLinkProblem) log.warn(`[shell] no login link from the service agent: ${redactor.redact(message)}`);
    lastLinkProblem = message;
    clientShows = 'not-running';
    loadWindow(target, { kind: 'local', reason: { kind: 'service-not-running', detail: redactor.redact(message) } });
  });
}

function onLoginLink(url: string): void {
  const target = window;
  if (!target || target.isDestroyed()) return;
  // Only the origin the agent announced when it became ready, whatever a later message says.
  const origin = loginLinkOrigin(url);
  if (origin === null || !acceptLoginLink(url, agentOrigin)) {
    log.error(`[shell] ignored a login link for another origin (${safeUrl(url)})`);
    return;
  }
  loadWindow(target, { kind: 'link', url, origin });
}

/** Own agent: its process stopped; the window leaves its page (another account may take the port now). */
function onAgentDown(): void {
  agentRunning = false;
  agentOrigin = null;
  if (!quitting && window && !window.isDestroyed()) loadWindow(window, { kind: 'local', reason: ownAgentDown() });
}

function send(message: ParentMessage): void {
  supervisor?.send(message);
}

const quitItem = {
  label: 'Quit',
  click: () => {
    quitting = true;
    app.quit();
  },
};

function buildTrayMenu(): Menu {
  const paused = status?.paused ?? false;
  const running = status !== null;
  if (service) {
    // Client mode: the service's state and the window; pausing and the rest are done in the window.
    return Menu.buildFromTemplate([
      ...clientTrayState(serviceView).lines.map((label) => ({ label, enabled: false })),
      { label: 'Open status window', click: showWindow },
      { type: 'separator' },
      quitItem,
    ]);
  }
  return Menu.buildFromTemplate([
    { label: 'Open status window', enabled: windowAvailable, click: showWindow },
    { type: 'separator' },
    {
      label: paused ? 'Resume applying updates' : 'Pause applying updates',
      enabled: running,
      // The agent answers with a status message, which redraws the tray.
      click: () => send({ type: 'pause', paused: !paused }),
    },
    ...(supervisor?.state === 'gave-up'
      ? [
          {
            label: 'Start the agent again',
            click: () => {
              supervisor?.retry();
              if (window && !window.isDestroyed()) loadWindow(window, { kind: 'local', reason: ownAgentDown() });
            },
          },
        ]
      : []),
    { label: 'Open logs folder', enabled: logDir !== null, click: () => void shell.openPath(logDir ?? '') },
    {
      label: 'Start at login',
      type: 'checkbox',
      checked: status?.startAtLogin ?? false,
      enabled: running,
      // The agent owns the settings file (the window writes it too); its status message brings the change back.
      click: (item) => send({ type: 'start-at-login', enabled: item.checked }),
    },
    { type: 'separator' },
    quitItem,
  ]);
}

let lastTray = '';
function refreshTray(): void {
  if (!tray) return;
  const asClient = service ? clientTrayState(serviceView) : null;
  // Without the agent's own status, the severity model's "cannot be reached" (red) once it has stopped.
  const fallback = trayState(null, downSince === null ? { phase: 'starting' } : { phase: 'down', since: downSince, why: notRunning ?? 'the agent process stopped; it is being restarted' });
  const colour: TrayColour = asClient?.colour ?? status?.colour ?? fallback.colour;
  const text = asClient?.tooltip ?? status?.summary ?? fallback.tooltip;
  // Windows truncates tray tooltips at 127 characters.
  const tooltip = text.length > 127 ? `${text.slice(0, 126)}…` : text;
  const key = `${colour}|${tooltip}|${status?.paused}|${status?.startAtLogin}|${supervisor?.state}|${windowAvailable}|${asClient?.lines.join('|')}`;
  if (key === lastTray) return;
  lastTray = key;
  tray.setImage(trayIcon(colour));
  tray.setToolTip(tooltip);
  tray.setContextMenu(buildTrayMenu());
}

/** The log folder before the agent's configuration is validated (the agent process checks the rest). */
function desktopLogDir(options: LoadOptions): string {
  const { raw, relativeTo } = rawConfigInput(options);
  const dir = (raw.log as { dir?: unknown } | undefined)?.dir;
  return typeof dir === 'string' && dir.length > 0 ? path.resolve(relativeTo, dir) : path.join(dataDirFor(options), 'logs');
}

/** Electron's utilityProcess as the supervisor's child. */
function spawnAgentProcess(): ChildHandle {
  // On Linux with the malloc settings a running agent starts with (src/threads/malloc-settings.ts).
  const child = utilityProcess.fork(agentProcessEntry(__dirname, fs.existsSync), [], {
    serviceName: 'POS Sync Agent',
    stdio: app.isPackaged ? 'ignore' : 'inherit',
    env: agentEnvironment(process.env, process.platform),
  });
  // Nothing is posted before the process exists, so the start message cannot be lost.
  let spawned = false;
  const queue: ParentMessage[] = [];
  child.once('spawn', () => {
    spawned = true;
    for (const m of queue.splice(0)) child.postMessage(m);
  });
  return {
    get pid() {
      return child.pid;
    },
    send: (message) => (spawned ? child.postMessage(message) : queue.push(message)),
    kill: () => {
      // kill() is SIGTERM on POSIX, which a hung agent may not act on; Windows' kill() already terminates.
      if (process.platform !== 'win32' && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
      else child.kill();
    },
    onMessage: (listener) => child.on('message', listener),
    onExit: (listener) => child.on('exit', (code) => listener(code)),
  };
}

function onSecretSet(message: Extract<ChildMessage, { type: 'secret-set' }>, store: ReturnType<typeof desktopSecretStore>): void {
  let error: { id: string; message: string } | null = null;
  try {
    if (message.value === null) store.delete(message.name);
    else {
      store.set(message.name, message.value);
      redactor.add(message.value);
    }
  } catch (err) {
    error = { id: err instanceof AppError ? err.id : 'secret_store_failed', message: redactor.redact(describeError(err)) };
  }
  send({ type: 'secret-result', requestId: message.requestId, sources: secretSources(store), error });
}

function startSupervisor(options: LoadOptions, hidden: boolean): void {
  const store = desktopSecretStore(options, safeStorage);
  // The CLI writes plain secrets (secrets.json); the desktop keeps them only encrypted.
  const moved = movePlainSecrets(plainSecretsFile(options), store.base as SafeStorageSecretStore);
  if (moved.length > 0) log.info(`[shell] moved ${moved.join(', ')} from ${plainSecretsFile(options)} into ${store.base.description}; the plain file is removed`);
  // An untouched install gets its webhook token here, kept encrypted; an earlier version's folder without one must choose (ops/webhook-token.ts).
  const token = ensureWebhookToken(options, store);
  if (token.kind === 'choose') throw ConfigError.of([token.problem]);
  if (token.kind === 'generated') log.info(`[shell] made this install's webhook token, kept in ${store.base.description}`);
  let shownOnce = false;
  supervisor = new Supervisor({
    spawn: spawnAgentProcess,
    log,
    startMessage: () => {
      const { secrets, sources } = resolveDesktopSecrets(options, store);
      redactor.add(...Object.values(secrets));
      return { type: 'start', configFile: options.file ?? null, secrets, sources };
    },
  });
  supervisor.on('message', (message) => {
    switch (message.type) {
      case 'ready':
        try {
          // The window may only ever load a loopback http origin, whatever the agent process says.
          agentOrigin = adminOriginOf(message.adminLoginUrl);
        } catch (err) {
          log.error(`[shell] not opening the window: ${describeError(err)}`);
          break;
        }
        windowAvailable = true;
        agentRunning = true;
        notRunning = null;
        downSince = null;
        // After a restart the window follows the new agent; the first time it opens unless started hidden.
        if (window && !window.isDestroyed()) loadAdmin(window);
        else if (!shownOnce && !hidden) showWindow();
        shownOnce = true;
        break;
      case 'status':
        status = message;
        applyStartAtLogin(message.startAtLogin);
        break;
      case 'fatal':
        log.error(`[shell] the agent reported: ${message.id}: ${message.message}`);
        break;
      case 'secret-set':
        onSecretSet(message, store);
        break;
      case 'restart-request':
        break;
      case 'login-link':
        onLoginLink(message.url);
        break;
    }
    refreshTray();
  });
  supervisor.on('exit', () => {
    status = null;
    downSince ??= new Date().toISOString();
    onAgentDown();
    refreshTray();
  });
  supervisor.on('gave-up', ({ reason, lastFatal }) => {
    status = null;
    downSince ??= new Date().toISOString();
    notRunning = lastFatal?.message ?? reason;
    onAgentDown();
    refreshTray();
    dialog.showErrorBox('POS Sync Agent is not running', `${lastFatal?.message ?? reason}\n\nLogs: ${logDir ?? '(not configured yet)'}\nThe tray menu can start it again.`);
  });
  supervisor.start();
}

/**
 * Client mode: a service agent runs for this PC (its machine-wide configuration exists), so this app
 * starts none. The tray shows the service's severity (service-client.ts) and the window opens the
 * service's status window by a login link when the service lets this account ask for one, else the
 * app's local page; it follows the service stopping and starting again (clientWindowStep).
 */
function startClient(endpoints: ServiceEndpoints, hidden: boolean): void {
  service = endpoints;
  windowAvailable = true;
  log.info(`[shell] POS Sync Agent ${app.getVersion()}: a client of the service agent (${endpoints.configFile}); not starting an agent here`);
  const poll = (): void => {
    void askService(endpoints).then((view) => {
      // The desktop log says when what the service shows this account changes (refused, stopped...).
      if (view.kind !== serviceView.kind) log.info(`[shell] service agent: ${clientTrayState(view).lines.join('; ')}`);
      serviceView = view;
      const target = window;
      if (target && !target.isDestroyed()) {
        const step = clientWindowStep(view, clientShows);
        if (step === 'show-not-running') {
          clientShows = 'not-running';
          loadWindow(target, { kind: 'local', reason: { kind: 'service-not-running' } });
        } else if (step === 'ask-link') loadServiceWindow(target, endpoints);
      }
      refreshTray();
    });
  };
  poll();
  setInterval(poll, 10_000).unref();
  if (!hidden) showWindow();
  refreshTray();
}

function main(): void {
  // Every file this process writes (desktop log, secrets.safe.json) is owner-only; the agent process
  // sets its own umask (importing ops/private-files here would pull SQLite into main).
  if (process.platform !== 'win32') process.umask(0o077);
  if (!app.requestSingleInstanceLock()) {
    // Another copy is running: it shows its window (second-instance below) and this one leaves.
    app.quit();
    return;
  }
  app.enableSandbox();
  app.on('second-instance', showWindow);
  hardenApp(() => windowOrigin, shellLog);
  // The tray keeps the app alive with no window open.
  app.on('window-all-closed', () => undefined);
  app.on('before-quit', (event) => {
    quitting = true;
    const running = supervisor;
    if (running && running.state !== 'stopped') {
      event.preventDefault();
      void running
        .stop()
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

  void app.whenReady().then(() => {
    Menu.setApplicationMenu(null);
    tray = new Tray(trayIcon('grey'));
    tray.setToolTip('POS Sync Agent — starting');
    tray.on('click', showWindow);
    tray.setContextMenu(buildTrayMenu());
    try {
      // The same rule as every other entry point (config/site.ts): --config, POS_SYNC_CONFIG, the
      // machine-wide file, the user's own, else built-in defaults.
      const site = resolveSiteConfig({ option: desktopConfigOption(process.argv), exists: (f) => fs.existsSync(f), machineTrusted: () => machineConfigTrusted() });
      const options: LoadOptions = { file: site.file, defaultDataDir: site.defaultDataDir };
      const mode = desktopMode(site, rawConfigInput(options).raw, dataDirFor(options));
      if (mode.kind === 'client') {
        startClient(mode.service, startHidden(process.argv));
        return;
      }
      logDir = desktopLogDir(options);
      log = configureLogging({ dir: logDir, level: 'info', maxFileBytes: 5 * 1024 * 1024, console: !app.isPackaged, fileName: 'desktop.log' }, electronLog);
      log.info(`[shell] POS Sync Agent ${app.getVersion()} starting (Electron ${process.versions.electron}); agent log in ${path.join(logDir, 'agent.log')}`);
      startSupervisor(options, startHidden(process.argv));
    } catch (err) {
      const message = redactor.redact(describeError(err));
      log.error(`[shell] the agent could not start: ${message}`);
      dialog.showErrorBox('POS Sync Agent could not start', `${message}\n\nLogs: ${logDir ?? '(not configured yet)'}`);
      quitting = true;
      app.exit(1);
      return;
    }
    refreshTray();
  });
}

main();
