import Router from 'router';
import { FIRST_DATE, hasIsoDateShape, inDateDomain, isIsoDate } from '../../domain/dates';
import { TEXT_LIMITS } from '../../domain/payload';
import { AppError } from '../../errors';
import { sendJson } from '../../http/errors';
import { query } from '../../http/request';
import type { AdminAgent } from '../deps';
import { optionalPositiveInt } from './common';

/**
 * The PLU asked for, trimmed: as long as a PLU the till can hold (docs/pos-database.md, "Limits":
 * counted in characters, after trimming surrounding spaces).
 */
function pluOf(value: unknown): string {
  const plu = typeof value === 'string' ? value.trim() : '';
  if (plu === '') throw new AppError('invalid_parameter', 400, 'enter a PLU');
  const characters = [...plu].length;
  if (characters > TEXT_LIMITS.PLU) throw new AppError('plu_too_long', 400, `this PLU is ${characters} characters long; a PLU on the till has at most ${TEXT_LIMITS.PLU}`);
  return plu;
}

/** The date asked for, or null for today; a date outside the calendar or the till's dates is named. */
function dateOf(value: unknown): string | null {
  if (value === undefined || value === '') return null;
  if (!hasIsoDateShape(value)) throw new AppError('invalid_date', 400, 'date must be YYYY-MM-DD');
  if (!isIsoDate(value)) throw new AppError('invalid_date', 400, `${value} is not a date in the calendar`);
  if (!inDateDomain(value)) throw new AppError('invalid_date', 400, `${value} is before ${FIRST_DATE}, the first date the till knows`);
  return value;
}

/** "What will the till charge?": the POS views' answer for a PLU on a date (GET /api/lookup). */
export function tillRoutes(agent: Pick<AdminAgent, 'core'>): Router.Router {
  const core = agent.core;
  const router = Router();
  router.get('/api/lookup', (req, res) => {
    const q = query(req);
    const plu = pluOf(q.plu);
    const date = dateOf(q.date);
    const locationId = optionalPositiveInt(q.location, 'location');
    sendJson(res, 200, core.lookup(plu, { locationId, date }));
  });
  return router;
}
