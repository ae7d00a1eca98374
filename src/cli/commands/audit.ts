import { actorPerson, auditSentence } from '../../domain/audit-text';
import { isIsoDate } from '../../domain/dates';
import { timeWithZone } from '../../domain/local-time';
import { auditRecords } from '../../store/audit';
import { withCore } from '../core-session';
import { EXIT, UsageError, type Command } from '../command';

/** Who did what and when (agent.db's audit log), newest first: the same records as the window's Activity view. */
export const audit: Command = {
  name: 'audit',
  summary: 'who did what and when: pause, resume, force-apply, resolve, import, secrets, restore, login (newest first)',
  usage: '[--limit N] [--since YYYY-MM-DD]',
  options: { limit: { type: 'string' }, since: { type: 'string' } },
  check(ctx) {
    const rawLimit = ctx.values.limit;
    if (rawLimit !== undefined && (typeof rawLimit !== 'string' || !/^\d+$/.test(rawLimit) || Number(rawLimit) < 1)) throw new UsageError('--limit takes a whole number of at least 1');
    const since = ctx.values.since;
    if (since !== undefined && (typeof since !== 'string' || !isIsoDate(since))) throw new UsageError('--since takes a date as YYYY-MM-DD');
  },
  run(ctx) {
    const rawLimit = ctx.values.limit as string | undefined;
    const since = ctx.values.since as string | undefined;
    const limit = Math.min(rawLimit === undefined ? 50 : Number(rawLimit), 10_000);
    return withCore(ctx, (core) => {
      const records = auditRecords(core.agentDb, { limit, since: since ?? null }).map((r) => ({ ...r, person: actorPerson(r.actor), text: auditSentence(r) }));
      if (ctx.json) ctx.printJson({ dataDir: core.config.dataDir, records });
      else {
        ctx.out('Audit log (newest first):');
        if (records.length === 0) ctx.out('  nothing recorded yet');
        for (const r of records) ctx.out(`  ${timeWithZone(r.at)}  ${r.actor}: ${r.text}`);
      }
      return EXIT.ok;
    });
  },
};
