import Router from 'router';
import { parseUpdateName, UPDATE_NAME_HELP } from '../../domain/update-name';
import { AppError } from '../../errors';
import { bodyOf, rawBody } from '../../http/body';
import { sendJson } from '../../http/errors';
import { keepConflictBody, listConflicts } from '../../store/conflicts';
import { resolveUpdateName } from '../../store/update-names';
import type { AdminDeps } from '../deps';
import { jsonBody as json, windowActor as actor, windowActorForLog } from './common';

/**
 * What a manager changes about the updates: importing a file, force-applying one that waits, choosing
 * between conflicting redeliveries, acknowledging warnings, pausing the applier. Each is audited.
 */
export function updatesRoutes(deps: Pick<AdminDeps, 'agent' | 'log'>): Router.Router {
  const { agent, log } = deps;
  const core = agent.core;
  const router = Router();

  router.post('/api/import', rawBody({ limit: agent.config.webhook.maxBodyBytes }), async (req, res) => {
    const body = bodyOf(req);
    const raw: Buffer = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
    if (raw.length === 0) throw new AppError('empty_payload', 400, 'the file is empty');
    const { outcome, applied } = await agent.importPayload(raw, actor(req));
    log.info(`status window: payload imported (${raw.length} bytes): ${outcome.kind === 'stored' ? outcome.decision : `rejected ${outcome.errorId}`}`);
    if (outcome.kind === 'rejected') {
      sendJson(res, 422, { outcome: { kind: 'rejected', quarantineId: outcome.quarantineId, errorId: outcome.errorId, error: outcome.error }, applied });
      return;
    }
    sendJson(res, 200, { outcome, applied });
  });

  // :name is LOCATION:SEQUENCE as the window shows it (e.g. 118:1047), or #N / N for the inbox number.
  router.post('/api/updates/:name/force-apply', json, async (req, res) => {
    const name = parseUpdateName(req.params.name);
    if (!name) throw new AppError('invalid_update_name', 400, UPDATE_NAME_HELP);
    const inboxId = resolveUpdateName(agent.core.agentDb, name).inboxId;
    const reason = (bodyOf(req) as { reason?: unknown } | undefined)?.reason;
    if (typeof reason !== 'string' || reason.trim().length < 3 || reason.length > 500) {
      throw new AppError('reason_required', 400, 'say why you force this update (3 to 500 characters); it goes to the audit log');
    }
    const result = await agent.forceApply(inboxId, actor(req), reason.trim());
    log.warn(`status window: update #${inboxId} force-applied by ${windowActorForLog()}`);
    sendJson(res, 200, result);
  });

  // Conflicting redeliveries (store/conflicts.ts): listed for the window, which fetches both bodies
  // through /api/payloads/inbox/:id; keeping one is audited and the kept body then waits its turn.
  router.get('/api/conflicts', (_req, res) => {
    sendJson(res, 200, { conflicts: listConflicts(core.agentDb) });
  });

  router.post('/api/conflicts/:name/keep', json, async (req, res) => {
    const name = parseUpdateName(req.params.name);
    if (!name) throw new AppError('invalid_update_name', 400, UPDATE_NAME_HELP);
    const body = bodyOf(req) as { inboxId?: unknown; reason?: unknown } | undefined;
    const reason = body?.reason;
    if (typeof reason !== 'string' || reason.trim().length < 3 || reason.length > 500) {
      throw new AppError('reason_required', 400, 'say why you keep this body (3 to 500 characters); it goes to the audit log');
    }
    const keep = body?.inboxId;
    if (typeof keep !== 'number' || !Number.isSafeInteger(keep) || keep < 1) throw new AppError('invalid_parameter', 400, 'inboxId must be the number of one of the bodies');
    const target = resolveUpdateName(core.agentDb, name);
    const resolution = keepConflictBody(core.agentDb, core.tillDb, { locationId: target.locationId, changeSequence: target.changeSequence, keep, actor: actor(req), reason: reason.trim() });
    log.warn(`status window: conflict of update ${resolution.name} resolved by ${windowActorForLog()}: kept #${resolution.kept}`);
    // A drain in any case: it applies a kept body that now waits, and refreshes the till's counters
    // (pos_sync_state.waiting_updates counted the conflicting copy).
    const applied = await agent.drainNow();
    sendJson(res, 200, { resolution, applied });
  });

  router.post('/api/warnings/acknowledge', json, (req, res) => {
    const raw = (bodyOf(req) as { locationId?: unknown } | undefined)?.locationId;
    if (raw !== null && raw !== undefined && (typeof raw !== 'number' || !Number.isInteger(raw))) throw new AppError('invalid_parameter', 400, 'locationId must be a number or null');
    sendJson(res, 200, { acknowledged: agent.acknowledgeWarnings(actor(req), (raw as number | null | undefined) ?? null) });
  });

  // The reason is optional, as with `pos-sync-agent pause --reason`: the audit log (Activity) keeps it.
  router.put('/api/sync/paused', json, (req, res) => {
    const body = bodyOf(req) as { paused?: unknown; reason?: unknown } | undefined;
    const paused = body?.paused;
    if (typeof paused !== 'boolean') throw new AppError('invalid_parameter', 400, 'paused must be true or false');
    const reason = body?.reason;
    if (reason !== undefined && reason !== null && (typeof reason !== 'string' || reason.length > 500)) throw new AppError('invalid_parameter', 400, 'reason must be a text of at most 500 characters');
    agent.setPaused(paused, actor(req), typeof reason === 'string' && reason.trim() !== '' ? reason.trim() : null);
    sendJson(res, 200, { paused: agent.isPaused });
  });
  return router;
}
