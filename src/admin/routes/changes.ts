import Router from 'router';
import { inDateDomain, isIsoDate, type IsoDate } from '../../domain/dates';
import { AppError } from '../../errors';
import { sendJson } from '../../http/errors';
import { query } from '../../http/request';
import { upcomingChangesFor } from '../../till/changes';
import { COMING_UP_LIMIT, ComingUpReplySchema, matchesSearch, type ComingUpReply } from '../changes-schema';
import type { AdminAgent } from '../deps';

/** The window shows two weeks ahead; the API allows a little more for a manager planning a month. */
const DEFAULT_DAYS = 14;
const MAX_DAYS = 62;

function whole(value: unknown, name: string, min: number, max: number): number | null {
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string' || !/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new AppError('invalid_parameter', 400, `${name} must be a whole number from ${min} to ${max}`);
  }
  return Number(value);
}

/**
 * GET /api/changes?location=&from=&days=&q=: what changes on the till, by date (the Coming up tab;
 * the same computation as `pos-sync-agent changes`). Each location's window starts on its own today.
 */
export function changesRoutes(agent: Pick<AdminAgent, 'core'>): Router.Router {
  const router = Router();
  router.get('/', (req, res) => {
    const q = query(req);
    const locationId = whole(q.location, 'location', 1, Number.MAX_SAFE_INTEGER);
    const days = whole(q.days, 'days', 1, MAX_DAYS) ?? DEFAULT_DAYS;
    const from = q.from;
    if (from !== undefined && from !== '' && !(isIsoDate(from) && inDateDomain(from))) throw new AppError('invalid_parameter', 400, 'from must be a date YYYY-MM-DD from 0001-01-01 to 9999-12-31');
    const search = typeof q.q === 'string' ? q.q.slice(0, 100) : '';
    const result = upcomingChangesFor(agent.core, { locationId, from: typeof from === 'string' && from !== '' ? (from as IsoDate) : null, days });
    const matching = result.changes.filter((c) => matchesSearch(c, search));
    const reply: ComingUpReply = { days, search, windows: [...result.windows], total: matching.length, changes: matching.slice(0, COMING_UP_LIMIT) };
    sendJson(res, 200, ComingUpReplySchema.parse(reply));
  });
  return router;
}
