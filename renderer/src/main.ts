import '../styles.css';
import { ApiError, errorText, get, openEvents, send, startSession, whenUnauthorised, type Session } from './api';
import { DeliveriesChart } from './chart';
import { ActivityView, askPerson } from './activity';
import { ComingUpView } from './coming-up';
import { DeliveriesView } from './deliveries';
import { byId, confirmDialog, h, replace, toast } from './dom';
import { SettingsView } from './settings';
import { StaffView } from './staff';
import { renderHeader, renderStatus, summaryOf, type Reachability } from './status';
import { TillView } from './till';
import type { StatusResponse } from './types';
import { cliCommand, setCliConfigArgument } from './cli';
import { setText } from './keep-place';

type TabName = 'status' | 'deliveries' | 'till' | 'coming' | 'staff' | 'activity' | 'settings';
const TABS: TabName[] = ['status', 'deliveries', 'till', 'coming', 'staff', 'activity', 'settings'];

class App {
  private current: TabName = 'status';
  private readonly chart = new DeliveriesChart();
  private readonly deliveries = new DeliveriesView(() => this.refresh());
  private readonly till = new TillView();
  private readonly comingUp = new ComingUpView();
  private readonly staff = new StaffView();
  private readonly settings = new SettingsView();
  private readonly activity = new ActivityView();
  private status: StatusResponse | null = null;
  /** Whether the agent answered the last status request, and since when it has not. */
  private reach: Reachability = { reachable: true };
  private refreshing = false;
  private again = false;

  constructor(readonly session: Session) {
    byId('panel-status').append(this.chart.element);
    byId('panel-deliveries').append(this.deliveries.element);
    byId('panel-till').append(this.till.element);
    byId('panel-coming').append(this.comingUp.element);
    byId('panel-staff').append(this.staff.element);
    byId('panel-settings').append(this.settings.element);
    byId('panel-activity').append(this.activity.element);
    this.setUpTabs();
    byId('pause-button').addEventListener('click', () => void this.togglePause());
  }

  private setUpTabs(): void {
    const tabs = TABS.map((name) => byId<HTMLButtonElement>(`tab-${name}`));
    tabs.forEach((tab, i) => {
      tab.addEventListener('click', () => this.select(TABS[i]!));
      // WAI-ARIA tabs: arrows move between tabs, Home/End jump.
      tab.addEventListener('keydown', (e) => {
        const moves: Record<string, number> = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TABS.length - 1 };
        const target = moves[e.key];
        if (target === undefined) return;
        e.preventDefault();
        const next = (target + TABS.length) % TABS.length;
        this.select(TABS[next]!);
        tabs[next]!.focus();
      });
    });
    const fromHash = location.hash.slice(1) as TabName;
    if (TABS.includes(fromHash)) this.select(fromHash);
  }

  select(name: TabName): void {
    this.current = name;
    for (const t of TABS) {
      const tab = byId(`tab-${t}`);
      tab.setAttribute('aria-selected', String(t === name));
      tab.tabIndex = t === name ? 0 : -1;
      byId(`panel-${t}`).hidden = t !== name;
    }
    history.replaceState(null, '', `#${name}`);
    void this.refresh();
  }

  /** Refreshes the header and the visible tab; calls during a refresh coalesce into one more. */
  async refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return;
    }
    this.refreshing = true;
    try {
      do {
        this.again = false;
        await this.refreshOnce();
      } while (this.again);
    } finally {
      this.refreshing = false;
    }
  }

  private async refreshOnce(): Promise<void> {
    if (signedOut) return; // signed out: nothing more is asked of the agent (signOut)
    try {
      this.status = await get<StatusResponse>('/api/status');
      setCliConfigArgument(this.status.cliConfigArgument);
      this.reach = { reachable: true };
    } catch (err) {
      // Signed out (signOut, through api.ts): the header already says so.
      if (err instanceof ApiError && err.status === 401) return;
      // Storage failing answers 503 storage_unavailable: the agent runs but cannot use its files.
      if (err instanceof ApiError && err.id === 'storage_unavailable') this.reach = { reachable: true, storageError: err.message };
      else this.reach = { reachable: false, since: this.reach.reachable ? new Date().toISOString() : (this.reach.since ?? null), why: err instanceof TypeError ? noAnswerHere() : errorText(err) };
    }
    const status: StatusResponse = this.status ?? { generatedAt: new Date().toISOString(), paused: false, gapAlertMinutes: 30, baselineSettleSeconds: 60, locations: [], alerts: [] };
    const summary = summaryOf(status, this.reach);
    renderHeader(status, summary);
    this.setActionsEnabled(summary.actionsEnabled);
    if (!this.reach.reachable || this.reach.storageError) {
      if (this.current === 'status' && this.status) renderStatus(byId('panel-status'), status, summary, () => void this.refresh(), () => this.openOperations());
      this.setActionsEnabled(summary.actionsEnabled);
      return;
    }
    try {
      this.till.setLocations(status.locations, status.paused);
      this.comingUp.setLocations(status.locations, status.paused);
      if (this.current === 'status') {
        renderStatus(byId('panel-status'), status, summary, () => void this.refresh(), () => this.openOperations());
        await this.chart.refresh();
      } else if (this.current === 'deliveries') await this.deliveries.refresh();
      else if (this.current === 'settings') await this.settings.refresh();
      else if (this.current === 'staff') await this.staff.refresh();
      else if (this.current === 'coming') await this.comingUp.refresh();
      else if (this.current === 'till') await this.till.refresh();
      else if (this.current === 'activity') await this.activity.refresh();
    } catch (err) {
      toast(`Cannot read this view: ${errorText(err)}`, 'error');
    }
  }

  /**
   * While the agent cannot be reached, every action (buttons, fields) is disabled; moving between
   * tabs and opening details still work. Views rebuilt after it is back are enabled again.
   */
  private setActionsEnabled(enabled: boolean): void {
    document.documentElement.dataset.agent = enabled ? 'reachable' : 'unreachable';
    const controls = document.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>('#pause-button, main button, main input, main select, main textarea');
    for (const c of controls) {
      if (!enabled && !c.disabled) {
        c.disabled = true;
        c.dataset.offlineDisabled = 'true';
      } else if (enabled && c.dataset.offlineDisabled) {
        c.disabled = false;
        delete c.dataset.offlineDisabled;
      }
    }
  }

  /** From a banner on the status tab to the panel with the details and actions. */
  private openOperations(): void {
    this.settings.showOperationsNext();
    this.select('settings');
    byId<HTMLButtonElement>('tab-settings').focus();
  }

  /** Pausing asks first, with a reason for Activity (optional, as `pause --reason` is); resuming does not. */
  private async togglePause(): Promise<void> {
    const paused = !(this.status?.paused ?? false);
    let reason = '';
    if (paused) {
      const answer = await confirmDialog({
        title: 'Pause applying updates?',
        body: [
          h('p', {}, 'The till keeps the prices it has now. Updates from head office are still received and stored, but none is applied until you resume.'),
          h('p', {}, 'Your name and reason go to the audit log (Activity).'),
          h('p', { class: 'muted' }, 'From the command line: ', h('code', {}, cliCommand('pause --reason "…"'))),
        ],
        confirmLabel: 'Pause now',
        input: { label: 'Reason (optional)', required: false },
      });
      if (!answer.confirmed) return;
      reason = answer.value;
    }
    try {
      await send('PUT', '/api/sync/paused', reason ? { paused, reason } : { paused });
      toast(paused ? 'Applying updates is paused; deliveries are still received.' : 'Applying updates resumed.');
    } catch (err) {
      toast(errorText(err), 'error');
    }
    await this.refresh();
  }

  /** Live updates: the server says when something changed; a slow poll covers a lost stream. */
  listen(): void {
    const live = byId('live');
    let timer: number | undefined;
    const soon = (): void => {
      window.clearTimeout(timer);
      timer = window.setTimeout(() => void this.refresh(), 150);
    };
    const close = openEvents({
      change: soon,
      live: (up) => {
        // Written only when it changes: a live region announces what is written to it again.
        setText(live, up ? 'Live' : 'Reconnecting…');
        live.className = up ? 'live live-on' : 'live live-off';
        // A lost stream may mean the agent stopped: find out now, not at the next slow poll.
        if (!up) soon();
      },
    });
    // The slow poll; while the agent cannot be reached, every few seconds, to notice its return.
    const slow = window.setInterval(() => void this.refresh(), 30_000);
    const fast = window.setInterval(() => {
      if (!this.reach.reachable) void this.refresh();
    }, 3_000);
    this.stopListening = () => {
      close();
      window.clearTimeout(timer);
      window.clearInterval(slow);
      window.clearInterval(fast);
    };
  }

  /** Signed out: the live stream closed (the agent counts each one), no more polls. */
  stop(): void {
    this.stopListening();
  }

  private stopListening: () => void = () => undefined;
}

/** The window once signed in. */
let app: App | null = null;
/** Set when an API call answers 401: nothing is asked of the agent any more. */
let signedOut = false;

/**
 * The session ended (left unused, the agent restarted, the token was changed): every API call now
 * answers 401. The window says so, closes the live stream it held open (the agent counts each one
 * against its limit) and stops polling: it asks the agent nothing more.
 */
function signOut(reason: string | null = null): void {
  showSignedOut(reason);
  if (app === null || signedOut) return;
  signedOut = true;
  app.stop();
}

/** The signed-out window: the header says so (no status, no live updates, no actions), and how to sign in. */
function showSignedOut(reason: string | null = null): void {
  byId('summary-light').className = 'light light-unknown';
  const label = byId('summary-label');
  label.className = 'badge badge-unknown';
  label.textContent = 'Signed out';
  const text = byId('summary-text');
  // The agent's reason starts in lower case (it is also read inside sentences).
  text.textContent = reason ? reason.charAt(0).toUpperCase() + reason.slice(1) : 'This window is not signed in: open a new login link to see the agent.';
  text.title = text.textContent;
  document.documentElement.dataset.light = 'unknown';
  document.documentElement.dataset.session = 'signed-out';
  const live = byId('live');
  live.textContent = 'Not connected';
  live.className = 'live live-off';
  const pause = byId<HTMLButtonElement>('pause-button');
  pause.disabled = true;
  pause.hidden = true;
  for (const id of ['person', 'person-ask']) replace(byId(id));
  byId('person-ask').hidden = true;
  document.querySelector<HTMLElement>('nav.tabs')!.hidden = true;
  replace(
    byId('main'),
    h(
      'section',
      { class: 'card' },
      h('h1', {}, 'This window is not signed in'),
      h('p', {}, `The session has ended: it was left unused, the agent restarted, or the access token was changed. Open a new login link: run ${cliCommand('admin-url')} (in the desktop app: Open status window in the tray).`),
    ),
  );
}

async function boot(): Promise<void> {
  whenUnauthorised(() => signOut());
  try {
    const session = await startSession();
    app = new App(session);
    askPerson();
    app.listen();
    document.documentElement.dataset.ready = 'true';
  } catch (err) {
    // A refused login link says why (used, expired); anything else is the agent not answering.
    if (err instanceof ApiError && err.status === 401) showSignedOut(err.message);
    else byId('summary-text').textContent = `Cannot reach the agent: ${errorText(err)}`;
  }
}

void boot();

/**
 * Why nothing answers at this window's address: the agent stopped, or it started again at a new
 * address (admin.newAddressEachStart), where this tab cannot follow; then a new login link opens it.
 */
function noAnswerHere(): string {
  return `nothing answers at this window's address; if the agent was restarted, the window has a new address: open it again from the tray, or with ${cliCommand('admin-url')}`;
}
