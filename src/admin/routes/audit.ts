import Router from 'router';
import { actorPerson, auditSentence } from '../../domain/audit-text';
import { sendJson } from '../../http/errors';
import { query } from '../../http/request';
import { auditRecords } from '../../store/audit';
import type { AdminAgent } from '../deps';
import { optionalPositiveInt } from './common';

/** The Activity tab: the audit log, newest first, in plain sentences (`pos-sync-agent audit` prints the same). */
export function auditRoutes(agent: Pick<AdminAgent, 'core'>): Router.Router {
  const router = Router();
  router.get('/api/audit', (req, res) => {
    const q = query(req);
    const limit = Math.min(optionalPositiveInt(q.limit, 'limit') ?? 100, 500);
    const before = optionalPositiveInt(q.before, 'before');
    sendJson(res, 200, { records: auditRecords(agent.core.agentDb, { limit, beforeId: before }).map((r) => ({ ...r, person: actorPerson(r.actor), text: auditSentence(r) })) });
  });
  return router;
}
