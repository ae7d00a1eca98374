import { AgentCore, operatorName } from '../../core';
import { cliCommand } from '../../config/invocation';
import { timeWithZone } from '../../domain/local-time';
import { bodyLines, diffHunks, diffLines } from '../../domain/line-diff';
import { parseUpdateName, UPDATE_NAME_HELP } from '../../domain/update-name';
import { conflictNamed, keepConflictBody, listConflicts, type Conflict, type ConflictBody } from '../../store/conflicts';
import { storedBody } from '../../store/queries';
import { resolveUpdateName } from '../../store/update-names';
import { DrainReply } from '../../ops/control-protocol';
import { withCore } from '../core-session';
import { EXIT, UsageError, type Command } from '../command';
import { runChange } from '../control-client';
import { formatBytes } from '../../ops/panels';

/** Conflicting redeliveries (docs/status-window.md, "Conflicting redeliveries"): compare, then keep one. */

function nameArgument(core: AgentCore, text: string): { locationId: number; changeSequence: number } {
  const name = parseUpdateName(text);
  if (!name) throw new UsageError(UPDATE_NAME_HELP);
  return resolveUpdateName(core.agentDb, name);
}

const STATE_TEXT: Record<string, string> = { pending: 'waiting', applied: 'applied', stale: 'stale', conflict: 'not applied (conflict)' };

function bodyLine(b: ConflictBody, index: number): string {
  return `  #${b.inboxId}  ${index === 0 ? 'received first' : 'received later'} ${timeWithZone(b.receivedAt)}  ${formatBytes(b.bytes)}  ${b.source}  ${STATE_TEXT[b.state] ?? b.state}${b.bodyKept ? '' : '  (bytes pruned by retention)'}`;
}

function describeConflict(c: Conflict): string[] {
  const lines = [`Update ${c.name}: ${c.bodies.length} different bodies`, ...c.bodies.map(bodyLine)];
  if (c.onlyFirst) lines.push(`  Only #${c.bodies[0]!.inboxId} can be kept: ${c.onlyFirst}`);
  lines.push(`  Compare: ${cliCommand(`conflicts ${c.name}`)}`, `  Keep one: ${cliCommand(`resolve-conflict ${c.name} --keep ${c.onlyFirst ? 'first' : 'first|later'} --reason TEXT`)}`);
  return lines;
}

export const conflictsCommand: Command = {
  name: 'conflicts',
  summary: 'updates received again with different content; with a name, the two bodies compared line by line',
  usage: '[LOCATION:SEQUENCE] [--location L]',
  options: { location: { type: 'string' } },
  positionals: [0, 1],
  check(ctx) {
    const raw = ctx.values.location;
    if (raw !== undefined && (typeof raw !== 'string' || !/^\d+$/.test(raw))) throw new UsageError('--location takes a whole number');
    if (ctx.args.length > 0 && !parseUpdateName(ctx.args[0]!)) throw new UsageError(UPDATE_NAME_HELP);
  },
  run(ctx) {
    const raw = ctx.values.location as string | undefined;
    return withCore(ctx, (core) => {
      if (ctx.args.length === 0) {
        const conflicts = listConflicts(core.agentDb, raw === undefined ? null : Number(raw));
        if (ctx.json) ctx.printJson({ conflicts });
        else if (conflicts.length === 0) ctx.out('No conflicting updates.');
        else for (const c of conflicts) ctx.out(describeConflict(c).join('\n'));
        return EXIT.ok;
      }
      const named = nameArgument(core, ctx.args[0]!);
      const conflict = conflictNamed(core.agentDb, named.locationId, named.changeSequence);
      const [first, ...later] = conflict.bodies;
      const text = (b: ConflictBody): string | null => storedBody(core.agentDb, 'inbox', b.inboxId)?.toString('utf8') ?? null;
      const comparisons = later.map((b) => {
        const left = text(first!);
        const right = text(b);
        return { first: first!.inboxId, later: b.inboxId, lines: left === null || right === null ? null : diffLines(bodyLines(left), bodyLines(right)) };
      });
      if (ctx.json) {
        ctx.printJson({ conflict, comparisons: comparisons.map((c) => ({ ...c, lines: c.lines?.filter((l) => l.kind !== 'same') ?? null })) });
        return EXIT.ok;
      }
      ctx.out(describeConflict(conflict).slice(0, -2).join('\n'));
      for (const c of comparisons) {
        ctx.out(`\n--- #${c.first} (received first)\n+++ #${c.later} (received later)`);
        if (c.lines === null) {
          ctx.out('  (a body was pruned by retention: nothing to compare)');
          continue;
        }
        for (const l of diffHunks(c.lines)) {
          ctx.out(l.kind === 'skipped' ? `  … ${l.count} identical lines …` : `${l.kind === 'removed' ? '-' : l.kind === 'added' ? '+' : ' '} ${l.text}`);
        }
      }
      ctx.out(`\nKeep one: ${cliCommand(`resolve-conflict ${conflict.name} --keep ${conflict.onlyFirst ? 'first' : 'first|later'} --reason TEXT`)}`);
      return EXIT.ok;
    });
  },
};

export const resolveConflictCommand: Command = {
  name: 'resolve-conflict',
  summary: 'keep one body of a conflicting update (first, later or #N) and drop the others; audited',
  usage: "LOCATION:SEQUENCE --keep first|later|'#N' --reason TEXT",
  options: { keep: { type: 'string' }, reason: { type: 'string' } },
  positionals: [1, 1],
  check(ctx) {
    if (!parseUpdateName(ctx.args[0]!)) throw new UsageError(UPDATE_NAME_HELP);
    const keep = ctx.values.keep;
    if (typeof keep !== 'string' || !/^(first|later|#\d+)$/.test(keep)) throw new UsageError('--keep takes first, later or #N (the inbox number `conflicts` shows)');
    const reason = ctx.values.reason;
    if (typeof reason !== 'string' || reason.trim().length < 3) throw new UsageError('--reason is required (at least 3 characters): it goes into the audit log');
  },
  async run(ctx) {
    const keep = ctx.values.keep as string;
    const reason = ctx.values.reason as string;
    const resolution = withCore(ctx, (core) => {
      const named = nameArgument(core, ctx.args[0]!);
      const conflict = conflictNamed(core.agentDb, named.locationId, named.changeSequence);
      const later = conflict.bodies.slice(1);
      if (keep === 'later' && later.length !== 1) throw new UsageError(`update ${conflict.name} has ${later.length} later bodies: name one with --keep #N (${later.map((b) => `#${b.inboxId}`).join(', ')})`);
      const keepId = keep === 'first' ? conflict.bodies[0]!.inboxId : keep === 'later' ? later[0]!.inboxId : Number(keep.slice(1));
      // agent.db only (its inbox states), in one short transaction, as the status window does.
      return keepConflictBody(core.agentDb, core.tillDb, { locationId: named.locationId, changeSequence: named.changeSequence, keep: keepId, actor: operatorName(), reason: reason.trim() });
    });
    // A kept body that now waits is applied when its chain allows, by the running agent's applier (the
    // one writer of the till file), or here when no agent runs.
    const applied =
      resolution.keptState === 'pending'
        ? (
            await runChange({
              dataDir: ctx.config().dataDir,
              what: 'resolve-conflict',
              actor: operatorName(),
              viaAgent: (client) => client.request(DrainReply, { method: 'POST', route: '/drain' }),
              direct: () => withCore(ctx, (core) => ({ applied: core.drain() })),
            })
          ).result.applied
        : [];
    if (ctx.json) ctx.printJson({ resolution, applied });
    else {
      ctx.out(`Kept #${resolution.kept} of update ${resolution.name}${resolution.dropped.length > 0 ? `; dropped ${resolution.dropped.map((id) => `#${id}`).join(', ')}` : ''}.`);
      for (const a of applied) ctx.out(`Applied location ${a.locationId} ChangeSequence ${a.changeSequence}.`);
      if (resolution.keptState === 'pending' && !applied.some((a) => a.inboxId === resolution.kept)) ctx.out(`It waits for its turn: see \`${cliCommand('status')}\`.`);
    }
    return EXIT.ok;
  },
};

export const CONFLICT_COMMANDS: readonly Command[] = [conflictsCommand, resolveConflictCommand];
