import { Router } from 'express';
import { actorPerson, auditSentence } from '../../domain/audit-text';
import { auditRecords } from '../../store/audit';
import type { AdminAgent } from '../deps';
import { optionalPositiveInt } from './common';

/** The Activity tab: the audit log, newest first, in plain sentences (`pos-sync-agent audit` prints the same). */
export function auditRoutes(agent: Pick<AdminAgent, 'core'>): Router {
  const router = Router();
  router.get('/api/audit', (req, res) => {
    const limit = Math.min(optionalPositiveInt(req.query.limit, 'limit') ?? 100, 500);
    const before = optionalPositiveInt(req.query.before, 'before');
    res.json({ records: auditRecords(agent.core.agentDb, { limit, beforeId: before }).map((r) => ({ ...r, person: actorPerson(r.actor), text: auditSentence(r) })) });
  });
  return router;
}
