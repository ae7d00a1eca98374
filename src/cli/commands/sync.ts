import { maskConfig } from '../../config/load';
import { describeSite } from '../../config/site';
import { cliCommand } from '../../config/invocation';
import { AgentCore, operatorName, readImportFile } from '../../core';
import { neverReceivedOf, pausedByAt, severityOf, staffSeverityOf, type StaffSeverity, type StatusReply } from '../../admin/summary';
import type { LocationSeverity } from '../../domain/severity';
import { StaffService } from '../../employees/service';
import { silentLogger } from '../../log';
import { isIsoDate } from '../../domain/dates';
import { formatUpdateName, parseUpdateName, UPDATE_NAME_HELP } from '../../domain/update-name';
import { resolveUpdateName } from '../../store/update-names';
import { AppError, ConfigError } from '../../errors';
import type { LocationStatus } from '../../store/queries';
import { commandCore, withCore } from '../core-session';
import { EXIT, UsageError, type Command, type CommandContext } from '../command';
import { writeErr } from '../output';
import { agentServices, mayPrintLoginLink } from '../services';
import { opsStatus } from '../../ops/status';
import { armTestFault, installCrashHandlers } from '../../ops/crash';
import { removeOwnPidFile } from '../../ops/instance';
import { ownershipProblems } from '../../ops/ownership';
import { headlessSecretStore, loadConfigWithSecrets, secretsFileFor } from '../../ops/secrets';
import { tookWebhookDeliveries } from '../../ops/webhook-deliveries';
import { ensureWebhookToken } from '../../ops/webhook-token';
import { startAgent } from '../../ops/startup';
import { AckWarningsReply, ForceApplyReply, ImportReply, PausedReply, ProgressReply } from '../../ops/control-protocol';
import { FORCED_STOP_TEXT, ProgressLine, stoppingText } from '../progress';
import { applyingMark, resumeNote, type PauseState } from '../../store/operations-state';
import { interruptedApply } from '../../sync/resume';
import type { ResumeNote } from '../../domain/wording';
import type { ReceiptOutcome } from '../../store/inbox';
import type { AppliedUpdate, ApplyProgress } from '../../sync/applier';
import { runChange, type ChangeResult } from '../control-client';
import { timeWithZone } from '../../domain/local-time';
import { plural, tillDayNotes } from '../../domain/wording';
import { staleAdvice } from '../../domain/stale-advice';

function optionalInteger(ctx: CommandContext, name: string): number | null {
  const raw = ctx.values[name];
  if (raw === undefined) return null;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) throw new UsageError(`--${name} takes a whole number`);
  return Number(raw);
}

export const serve: Command = {
  name: 'serve',
  summary: 'run the agent: webhook receiver, applier and (when configured) admin UI and staff sync',
  usage: '[--no-login-link]',
  options: { 'no-login-link': { type: 'boolean' } },
  async run(ctx) {
    const first = ctx.config();
    // Before the log file is opened in it: a data folder another account could have prepared is not used at all.
    const foreign = ownershipProblems(first);
    if (foreign.length > 0) throw ConfigError.of(foreign);
    // The site as every command finds it (--config, POS_SYNC_CONFIG, the machine-wide file, this
    // user's): the token is made in, and read back from, that site's secrets.
    const { file, defaultDataDir } = ctx.site();
    const options = { file, defaultDataDir };
    const token = ensureWebhookToken(options, headlessSecretStore(secretsFileFor(options)), tookWebhookDeliveries);
    if (token.kind === 'choose') throw ConfigError.of([token.problem]);
    const config = token.kind === 'generated' ? loadConfigWithSecrets(options).config : first;
    const log = ctx.logger(config);
    if (token.kind === 'generated') log.info(`made this install's webhook token (${cliCommand('secrets show webhook.bearerToken')} prints it for head office)`);
    log.info(`pos-sync-agent starting; data in ${config.dataDir} (configuration: ${describeSite(ctx.site())})`);
    log.info(`configuration: ${JSON.stringify(maskConfig(config))}`);
    // A crash exits (code 70) for the service manager to restart a clean process (ops/crash.ts).
    installCrashHandlers({ log, exit: (code) => process.exit(code), beforeExit: () => removeOwnPidFile(config.dataDir) });
    // All or nothing, one agent per data folder (ops/startup.ts).
    const output = { liveLoginLink: mayPrintLoginLink(process.env, process.stdout.isTTY === true, ctx.values['no-login-link'] === true) };
    const started = await startAgent(config, log, agentServices(config, log, output));
    const agent = started.agent;
    armTestFault();
    ctx.out(`Receiving menu cycle updates at ${agent.webhook?.url}`);
    await new Promise<void>((resolve) => {
      let signals = 0;
      const stop = (signal: string): void => {
        signals += 1;
        if (signals === 1) {
          log.info(`${signal} received, stopping`);
          // Say what it waits for: a large apply can take seconds, and silence looks like a hang.
          ctx.out(stoppingText(agent.applyProgress));
          resolve();
          return;
        }
        // Forced: the till file's open transaction is never committed (SQLite rolls it back), the
        // update stays pending in agent.db and is applied again at the next start.
        log.warn(`${signal} received again: stopping at once`);
        ctx.out(FORCED_STOP_TEXT);
        removeOwnPidFile(config.dataDir);
        process.exit(EXIT.interrupted);
      };
      process.on('SIGINT', () => stop('SIGINT'));
      process.on('SIGTERM', () => stop('SIGTERM'));
    });
    await started.stop();
    ctx.out('Stopped.');
    return EXIT.ok;
  },
};

/** Says where a change was made: by the running agent, or here because none runs. */
function handedTo(ctx: CommandContext, change: ChangeResult<unknown>): void {
  if (ctx.json) return;
  ctx.out(change.via === 'agent' ? `Handed to the running agent (pid ${change.pid}).` : 'No agent is running: done directly on the data folder.');
}

function viaWhom(change: ChangeResult<unknown>): { via: 'agent' | 'direct'; agentPid: number | null } {
  return { via: change.via, agentPid: change.via === 'agent' ? change.pid : null };
}

export const importCommand: Command = {
  name: 'import',
  summary: 'store and apply a payload file (a manual delivery from support) through the webhook path',
  usage: 'FILE',
  positionals: [1, 1],
  async run(ctx) {
    const config = ctx.config();
    const raw = readImportFile(ctx.args[0]!);
    const actor = operatorName();
    // On a terminal, one line rewritten as the apply progresses; none when piped or with --json.
    const line = new ProgressLine(ctx.json ? { isTTY: false, write: () => true } : process.stdout);
    let change: ChangeResult<{ outcome: ReceiptOutcome; applied: AppliedUpdate[] }>;
    try {
      change = await runChange<{ outcome: ReceiptOutcome; applied: AppliedUpdate[] }>({
        dataDir: config.dataDir,
        what: 'import',
        actor,
        viaAgent: async (client) => {
          let polling = line.active;
          const poll = async (): Promise<void> => {
            while (polling) {
              line.update((await client.request(ProgressReply, { method: 'GET', route: '/progress' }).catch(() => ({ applying: null }))).applying);
              await new Promise((r) => setTimeout(r, 200));
            }
          };
          const polled = poll();
          try {
            return (await client.request(ImportReply, { method: 'POST', route: '/import', body: raw })) as { outcome: ReceiptOutcome; applied: AppliedUpdate[] };
          } finally {
            polling = false;
            await polled;
          }
        },
        direct: () =>
          withCore(ctx, (core) => {
            const listener = (p: ApplyProgress): void => line.update(p);
            core.progressListeners.add(listener);
            try {
              return core.importPayload(raw, actor);
            } finally {
              core.progressListeners.delete(listener);
            }
          }),
      });
    } finally {
      line.end();
    }
    const { outcome, applied } = change.result;
    handedTo(ctx, change);
    // A refused payload is an error: with --json it goes to stderr as {"error":{...}} like every other.
    if (ctx.json && outcome.kind === 'rejected') {
      writeErr(`${JSON.stringify({ error: { id: outcome.errorId, message: `${outcome.error.field}: ${outcome.error.message}`, field: outcome.error.field, quarantineId: outcome.quarantineId } })}\n`);
    } else if (ctx.json) ctx.printJson({ outcome: outcome.kind === 'stored' ? { ...outcome, body: undefined } : outcome, applied, ...viaWhom(change) });
    else if (outcome.kind === 'rejected') {
      ctx.out(`Refused: ${outcome.error.field}: ${outcome.error.message} (kept as quarantine #${outcome.quarantineId}).`);
    } else {
      const e = outcome.envelope;
      ctx.out(`Stored update ${formatUpdateName(e.LocationID, e.ChangeSequence)} (location ${e.LocationID} ChangeSequence ${e.ChangeSequence}, parent ${e.ParentChangeSequence}; inbox #${outcome.inboxId}): ${outcome.decision}.`);
      for (const a of applied) ctx.out(`Applied location ${a.locationId} ChangeSequence ${a.changeSequence}${a.baseline ? ' as baseline' : ''} (${plural(a.warnings, 'warning', 'warnings')}).`);
      if (!applied.some((a) => a.inboxId === outcome.inboxId) && outcome.decision === 'new') ctx.out(`Not applied yet: see \`${cliCommand('status')}\`.`);
    }
    return outcome.kind === 'rejected' ? EXIT.invalidInput : EXIT.ok;
  },
};

function describePause(p: PauseState): string {
  if (!p.paused) return 'Applying updates: running.';
  return `Applying updates: PAUSED${p.changedBy ? ` by ${p.changedBy}` : ''}${p.changedAt ? ` at ${timeWithZone(p.changedAt)}` : ''}; deliveries are still received and stored. Resume with \`${cliCommand('resume')}\`.`;
}

function pauseCommand(paused: boolean): Command {
  return {
    name: paused ? 'pause' : 'resume',
    summary: paused
      ? 'stop applying updates to the till (deliveries are still received and stored); survives a restart'
      : 'apply updates again, starting with what arrived while paused',
    usage: '[--reason TEXT]',
    options: { reason: { type: 'string' } },
    check(ctx) {
      const rawReason = ctx.values.reason;
      if (rawReason !== undefined && (typeof rawReason !== 'string' || rawReason.trim() === '' || rawReason.length > 500)) throw new UsageError('--reason takes a text of 1 to 500 characters');
    },
    async run(ctx) {
      const config = ctx.config();
      const actor = operatorName();
      const rawReason = ctx.values.reason;
      const reason = typeof rawReason === 'string' ? rawReason.trim() : null;
      const change = await runChange<PauseState & { changed: boolean }>({
        dataDir: config.dataDir,
        what: paused ? 'pause' : 'resume',
        actor,
        viaAgent: (client) => client.request(PausedReply, { method: 'PUT', route: '/paused', body: { paused, ...(reason ? { reason } : {}) } }),
        direct: () =>
          withCore(ctx, (core) => {
            const changed = core.setPaused(paused, `${actor} (command line)`, reason);
            return { ...core.pause(), changed };
          }),
      });
      handedTo(ctx, change);
      const state = change.result;
      if (ctx.json) ctx.printJson({ ...state, ...viaWhom(change) });
      else {
        if (!state.changed) ctx.out(paused ? 'Already paused.' : 'Was not paused.');
        ctx.out(describePause(state));
      }
      return EXIT.ok;
    },
  };
}

export const pause = pauseCommand(true);
export const resume = pauseCommand(false);

/** A location's lines for `status`: the severity model's sentences, then the updates not applied yet. */
export function describeLocation(s: LocationStatus, verdict: LocationSeverity | null = null): string[] {
  const lines = [
    `Location ${s.locationId}${s.locationName ? ` ${s.locationName}` : ''}${s.currency ? ` (${s.currency})` : ''}${verdict ? ` — ${verdict.label.toUpperCase()}` : ''}`,
    s.lastChangeSequence === null
      ? '  nothing applied yet'
      : `  last applied ChangeSequence ${s.lastChangeSequence} at ${timeWithZone(s.lastAppliedAt)}`,
  ];
  for (const line of verdict?.lines ?? []) lines.push(`  ${line}`);
  // Queued updates are one line in the verdict; the others, named as force-apply takes them.
  for (const w of s.waiting.filter((x) => x.reason !== 'queued').slice(0, 20)) {
    const name = formatUpdateName(s.locationId, w.changeSequence);
    if (w.reason === 'waiting') {
      const missing = w.missing ?? w.parentChangeSequence;
      const refused = s.refusedMissing?.find((r) => r.changeSequence === missing);
      lines.push(
        `  gap: update ${name} (received ${timeWithZone(w.receivedAt)}) needs update ${missing}, ` +
          (refused ? `which arrived at ${timeWithZone(refused.receivedAt)} and was refused${refused.errorId ? ` (${refused.errorId})` : ''}` : 'which has not arrived'),
      );
    }
    else if (w.reason === 'fork') lines.push(`  cannot apply: update ${name} follows ${w.parentChangeSequence}, not the chain applied here; contact support`);
    else if (w.reason === 'settling') lines.push(`  new location: update ${name} received ${timeWithZone(w.receivedAt)}; the lowest update received becomes the baseline when the settle window ends`);
    else if (w.reason === 'not-for-site') lines.push(`  not for this site: update ${name} received ${timeWithZone(w.receivedAt)} (stored, not applied)`);
    else lines.push(`  needs adoption: update ${name}; run ${cliCommand(`force-apply ${name} --reason TEXT`)} to adopt it as the baseline`);
    if (w.note) lines.push(`    ${w.note}`);
  }
  const stale = staleAdvice(s);
  if (stale) lines.push(`  STALE: ${stale}`);
  if (s.conflicts > 0) {
    lines.push(`  ${plural(s.conflicts, 'update was', 'updates were')} received again with different content (not applied): compare with \`${cliCommand('conflicts')}\`, keep one with \`resolve-conflict\``);
  }
  if (s.warnings > 0) {
    lines.push(`  ${s.warnings} unacknowledged warnings:`);
    for (const w of s.recentWarnings.slice(0, 10)) lines.push(`    [change ${w.changeSequence}] ${w.path}: ${w.message}`);
  }
  return lines;
}

/** Right-to-work expiries from the staff cache, when staff lookups are configured (no network). */
async function cachedStaffSeverity(core: AgentCore): Promise<StaffSeverity | null> {
  if (!core.config.employees) return null;
  const staff = new StaffService(core.config, silentLogger, { db: core.staffDb });
  try {
    return staffSeverityOf(staff.residencyWarnings(), staff.settings.residencyWarningDays);
  } finally {
    await staff.stop();
  }
}

/**
 * What is being resumed: the running agent's note (agent.db), or, with no agent, the apply the last
 * one stopped during (applied again at the next start).
 */
function resumingNow(core: AgentCore, agentRunning: boolean): ResumeNote | null {
  if (agentRunning) return resumeNote(core.agentDb);
  const interrupted = interruptedApply(core.agentDb, core.tillDb);
  return interrupted ? { interrupted, queued: 0, since: applyingMark(core.agentDb)?.startedAt ?? new Date().toISOString() } : null;
}

export const status: Command = {
  name: 'status',
  summary: 'the light (red/amber/green) and why; per location: what is applied, what waits and for what',
  usage: '',
  async run(ctx) {
    const config = ctx.config();
    const core = commandCore(ctx);
    try {
      const now = new Date();
      const locations = core.status();
      const pauseNow = core.pause();
      // Tunnel, disk, backups and clock: what keeps updates arriving, next to what arrived.
      const ops = opsStatus(core.config, now);
      const reply: StatusReply = {
        generatedAt: now.toISOString(),
        paused: pauseNow.paused,
        ...pausedByAt(pauseNow),
        gapAlertMinutes: config.admin.gapAlertMinutes,
        baselineSettleSeconds: config.sync.baselineSettleSeconds,
        locations,
        neverReceived: neverReceivedOf(config.locations, locations),
        alerts: ops.alerts,
        staff: await cachedStaffSeverity(core),
        applying: null,
        resuming: resumingNow(core, ops.agent !== null),
      };
      // The same model as the window and the tray; without a running agent nothing applies updates.
      const severity = severityOf(reply, now, (iso) => timeWithZone(iso), ops.agent ? { reachable: true } : { reachable: false, why: `no agent is running on ${config.dataDir}`, locationsCurrent: true });
      if (ctx.json) ctx.printJson({ severity, paused: pauseNow, resuming: reply.resuming, locations, neverReceived: reply.neverReceived, staff: reply.staff, ops: ops.json });
      else {
        // The data folder is named above, with the configuration (cli/site-check.ts).
        ctx.out(`${severity.light.toUpperCase()} — ${severity.headline}`);
        if (severity.reasons.length > 1) for (const r of severity.reasons) ctx.out(`  [${r.light}] ${r.text}`);
        if (pauseNow.paused) ctx.out(describePause(pauseNow));
        if (locations.length === 0 && (reply.neverReceived ?? []).length === 0) ctx.out('No updates received yet.');
        for (const s of locations) ctx.out(describeLocation(s, severity.locations.find((v) => v.locationId === s.locationId) ?? null).join('\n'));
        for (const n of reply.neverReceived ?? []) ctx.out(`Location ${n.locationId}${n.name ? ` ${n.name}` : ''} — NOTHING RECEIVED\n  configured for this site, but head office has never sent an update for it`);
        ctx.out(ops.lines.join('\n'));
      }
      return EXIT.ok;
    } finally {
      core.close();
    }
  },
};

export const lookup: Command = {
  name: 'lookup',
  summary: 'what the till will charge for a PLU (and when it is available), from the POS views',
  usage: '--plu P [--location L] [--date YYYY-MM-DD]',
  options: { plu: { type: 'string' }, location: { type: 'string' }, date: { type: 'string' } },
  check(ctx) {
    const plu = ctx.values.plu;
    if (typeof plu !== 'string' || plu.trim() === '') throw new UsageError('--plu is required');
    const date = ctx.values.date;
    if (date !== undefined && !isIsoDate(date)) throw new UsageError('--date takes YYYY-MM-DD');
    optionalInteger(ctx, 'location');
  },
  run(ctx) {
    const plu = ctx.values.plu as string;
    const date = ctx.values.date;
    const locationId = optionalInteger(ctx, 'location');
    return withCore(ctx, (core) => {
      const answer = core.lookup(plu, { locationId, date: (date as string | undefined) ?? null });
      // Updates head office sent that are not on the till yet may change the answer (or add the PLU).
      const notYet = core.notYetOnTillNotes();
      const shownFor = locationId !== null ? [locationId] : answer.items.length > 0 ? [...new Set(answer.items.map((i) => i.locationId))] : [...notYet.keys()];
      const notYetOnTill = shownFor.flatMap((id) => (notYet.has(id) ? [{ locationId: id, note: notYet.get(id)! }] : []));
      // Not found is a failure (exit 1), so a script can tell "no such PLU" from "priced" without parsing.
      if (answer.items.length === 0) {
        if (!ctx.json) for (const n of notYetOnTill) ctx.out(`Location ${n.locationId}: ${n.note}`);
        throw new AppError('plu_not_found', 404, `no item with PLU ${plu.trim()}${locationId === null ? '' : ` at location ${locationId}`}`);
      }
      if (ctx.json) {
        ctx.printJson({ ...answer, notYetOnTill });
        return EXIT.ok;
      }
      for (const n of notYetOnTill) ctx.out(`Location ${n.locationId}: ${n.note}`);
      for (const item of answer.items) {
        ctx.out(`Location ${item.locationId}  PLU ${item.plu}  ${item.itemName} (${item.itemType}, item ${item.itemId}) on ${item.date}`);
        // The same notes as the status window's till lookup (src/domain/wording.ts).
        const notes = tillDayNotes(item.date, item.prices.length > 0, item.availability.length > 0);
        if (notes.prices) ctx.out(`  ${notes.prices}`);
        for (const p of item.prices) ctx.out(`  ${p.tariffName}: ${p.sellPrice} ${p.currency}  tax ${p.taxCode} ${p.taxRate}%  (${p.dateFrom}..${p.dateTo})`);
        if (notes.mealPeriods) ctx.out(`  ${notes.mealPeriods}`);
        for (const a of item.availability) ctx.out(`  ${a.mealPeriod}: ${a.status}  (${a.dateFrom}..${a.dateTo})`);
      }
      return EXIT.ok;
    });
  },
};

export const forceApply: Command = {
  name: 'force-apply',
  summary: 'apply a waiting update across a gap (audited); older waiting updates are skipped',
  usage: 'LOCATION:SEQUENCE --reason TEXT',
  options: { reason: { type: 'string' } },
  positionals: [1, 1],
  check(ctx) {
    if (!parseUpdateName(ctx.args[0]!)) throw new UsageError(UPDATE_NAME_HELP);
    const reason = ctx.values.reason;
    if (typeof reason !== 'string' || reason.trim() === '') throw new UsageError('--reason is required: it goes into the audit log');
  },
  async run(ctx) {
    const name = parseUpdateName(ctx.args[0]!)!;
    const reason = ctx.values.reason as string;
    const config = ctx.config();
    const actor = operatorName();
    // The name (LOCATION:SEQUENCE, #N) is resolved here, read-only; the change itself is handed over.
    const inboxId = withCore(ctx, (core) => resolveUpdateName(core.agentDb, name).inboxId);
    const change = await runChange({
      dataDir: config.dataDir,
      what: 'force-apply',
      actor,
      viaAgent: (client) => client.request(ForceApplyReply, { method: 'POST', route: '/force-apply', body: { inboxId, reason: reason.trim() } }),
      direct: () => withCore(ctx, (core) => core.forceApply(inboxId, actor, reason.trim())),
    });
    const result = change.result;
    handedTo(ctx, change);
    if (ctx.json) ctx.printJson({ ...result, ...viaWhom(change) });
    else {
      ctx.out(`Force-applied update ${formatUpdateName(result.forced.locationId, result.forced.changeSequence)} (location ${result.forced.locationId} ChangeSequence ${result.forced.changeSequence}).`);
      for (const a of result.then) ctx.out(`Then applied ChangeSequence ${a.changeSequence}.`);
    }
    return EXIT.ok;
  },
};

export const ackWarnings: Command = {
  name: 'ack-warnings',
  summary: 'mark the warnings of applied updates as seen (all locations, or --location L)',
  usage: '[--location L]',
  options: { location: { type: 'string' } },
  async run(ctx) {
    const locationId = optionalInteger(ctx, 'location');
    const config = ctx.config();
    const actor = operatorName();
    const change = await runChange({
      dataDir: config.dataDir,
      what: 'ack-warnings',
      actor,
      viaAgent: (client) => client.request(AckWarningsReply, { method: 'POST', route: '/ack-warnings', body: { locationId } }),
      direct: () => withCore(ctx, (core) => ({ acknowledged: core.acknowledgeWarnings(actor, locationId) })),
    });
    handedTo(ctx, change);
    if (ctx.json) ctx.printJson({ acknowledged: change.result.acknowledged, ...viaWhom(change) });
    else ctx.out(`Acknowledged ${plural(change.result.acknowledged, 'warning', 'warnings')}.`);
    return EXIT.ok;
  },
};

export const deliveries: Command = {
  name: 'deliveries',
  summary: 'recent deliveries: time, location, sequence, size and result',
  usage: '[--limit N]',
  options: { limit: { type: 'string' } },
  check(ctx) {
    optionalInteger(ctx, 'limit');
  },
  run(ctx) {
    const limit = optionalInteger(ctx, 'limit') ?? 50;
    return withCore(ctx, (core) => {
      const rows = core.deliveries(limit);
      if (ctx.json) ctx.printJson({ deliveries: rows });
      else if (rows.length === 0) ctx.out(`No deliveries in the history (it keeps them for retention.deliveryDays).`);
      else
        for (const d of rows) {
          ctx.out(
            `${timeWithZone(d.receivedAt)}  ${d.locationId ?? '-'}  ${d.changeSequence ?? '-'}  ${d.bytes} B  ${d.result}${d.warnings > 0 ? ` with ${plural(d.warnings, 'warning', 'warnings')} (see status)` : ''}${d.reason ? `  (${d.reason})` : ''}`,
          );
        }
      return EXIT.ok;
    });
  },
};

export const configShow: Command = {
  name: 'config',
  summary: 'print the effective configuration (defaults, file and environment merged; secrets masked)',
  usage: '',
  run(ctx) {
    ctx.printJson(maskConfig(ctx.config()));
    return EXIT.ok;
  },
};
