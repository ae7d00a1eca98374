import Router from 'router';
import { isIsoDate } from '../../domain/dates';
import { AppError } from '../../errors';
import { sendJson } from '../../http/errors';
import { query } from '../../http/request';
import type { AdminAgent } from '../deps';
import { optionalPositiveInt } from './common';

/** "What will the till charge?": the POS views' answer for a PLU on a date (GET /api/lookup). */
export function tillRoutes(agent: Pick<AdminAgent, 'core'>): Router.Router {
  const core = agent.core;
  const router = Router();
  router.get('/api/lookup', (req, res) => {
    const q = query(req);
    const plu = q.plu;
    if (typeof plu !== 'string' || plu.trim() === '' || plu.length > 64) throw new AppError('invalid_parameter', 400, 'enter a PLU');
    const date = q.date;
    if (date !== undefined && date !== '' && !isIsoDate(date)) throw new AppError('invalid_parameter', 400, 'date must be YYYY-MM-DD');
    const locationId = optionalPositiveInt(q.location, 'location');
    sendJson(res, 200, core.lookup(plu, { locationId, date: typeof date === 'string' && date !== '' ? date : null }));
  });
  return router;
}
