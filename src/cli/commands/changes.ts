import { inDateDomain, isIsoDate, toDayNumber, type IsoDate } from '../../domain/dates';
import { MAX_CHANGE_DAYS, upcomingChangesFor } from '../../till/changes';
import type { UpcomingChange } from '../../store/read-models';
import { EXIT, UsageError, type Command } from '../command';
import { commandCore } from '../core-session';

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** 1970-01-01 (day 0) was a Thursday. */
function weekday(date: IsoDate): string {
  return WEEKDAYS[(((toDayNumber(date) + 4) % 7) + 7) % 7]!;
}

function describe(c: UpcomingChange): string {
  const what = c.kind === 'price' ? c.tariffName! : c.mealPeriod!;
  const before = c.before ?? (c.kind === 'price' ? 'no price' : 'no schedule');
  const after = c.after ?? (c.kind === 'price' ? 'no price' : 'no schedule');
  const currency = c.kind === 'price' && c.currency ? ` ${c.currency}` : '';
  const tax = c.kind === 'price' && c.taxBefore !== null && c.taxAfter !== null && c.taxBefore !== c.taxAfter ? `  tax ${c.taxBefore} -> ${c.taxAfter}` : '';
  const cause = c.cause ? `  (ChangeSequence ${c.cause.changeSequence}, applied ${c.cause.appliedAt.slice(0, 16).replace('T', ' ')} UTC)` : '';
  return `  PLU ${c.plu}  ${c.itemName}  ${what}: ${before} -> ${after}${currency}${tax}${cause}`;
}

export const changes: Command = {
  name: 'changes',
  summary: 'what the till will charge or offer differently, day by day (default: the next 14 days)',
  usage: '[--location L] [--from YYYY-MM-DD] [--days N] [--json]',
  options: { location: { type: 'string' }, from: { type: 'string' }, days: { type: 'string' } },
  check(ctx) {
    const rawLocation = ctx.values.location;
    if (rawLocation !== undefined && (typeof rawLocation !== 'string' || !/^\d+$/.test(rawLocation))) throw new UsageError('--location takes a whole number');
    const from = ctx.values.from;
    if (from !== undefined && !(isIsoDate(from) && inDateDomain(from))) throw new UsageError('--from takes a date YYYY-MM-DD from 0001-01-01 to 9999-12-31');
    const rawDays = ctx.values.days ?? '14';
    if (typeof rawDays !== 'string' || !/^\d+$/.test(rawDays) || Number(rawDays) < 1 || Number(rawDays) > MAX_CHANGE_DAYS) {
      throw new UsageError(`--days takes a whole number from 1 to ${MAX_CHANGE_DAYS}`);
    }
  },
  run(ctx) {
    const rawLocation = ctx.values.location as string | undefined;
    const from = ctx.values.from as string | undefined;
    const rawDays = (ctx.values.days ?? '14') as string;
    const core = commandCore(ctx);
    try {
      const result = upcomingChangesFor(core, {
        locationId: rawLocation === undefined ? null : Number(rawLocation),
        from: (from as IsoDate | undefined) ?? null,
        days: Number(rawDays),
      });
      if (ctx.json) {
        ctx.printJson(result.changes);
        return EXIT.ok;
      }
      // Updates head office sent that are not on the till yet may add or change some of these.
      const notYet = core.notYetOnTillNotes();
      if (result.windows.length === 0) ctx.out('The till has no menu yet.');
      const asked = rawLocation === undefined ? null : Number(rawLocation);
      for (const [id, note] of notYet) {
        if ((asked === null || asked === id) && !result.windows.some((w) => w.locationId === id)) ctx.out(`Location ${id}: ${note}`);
      }
      for (const w of result.windows) {
        const mine = result.changes.filter((c) => c.locationId === w.locationId);
        ctx.out(`Location ${w.locationId}, ${w.from} to ${w.to}: ${mine.length === 0 ? 'no changes' : `${mine.length} change${mine.length === 1 ? '' : 's'}`}`);
        const note = notYet.get(w.locationId);
        if (note !== undefined) ctx.out(`  ${note}`);
        let day = '';
        for (const c of mine) {
          if (c.date !== day) {
            day = c.date;
            ctx.out(`${weekday(c.date as IsoDate)} ${c.date}`);
          }
          ctx.out(describe(c));
        }
      }
      return EXIT.ok;
    } finally {
      core.close();
    }
  },
};
