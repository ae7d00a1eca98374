import Router from 'router';
import type { z } from 'zod';
import type { Agent } from '../agent';
import type { AdminService } from '../admin/service';
import { DEFAULT_PANEL_SERVICES } from '../admin/service';
import { buildStatusReply } from '../admin/status-reply';
import { severityOf } from '../admin/summary';
import { clockTime } from '../domain/local-time';
import { AppError } from '../errors';
import { bodyOf, jsonBody } from '../http/body';
import { sendJson } from '../http/errors';
import type { Logger } from '../log';
import { audit } from '../store/audit';
import { ACTOR_HEADER, actorSchema, LoginLinkBody, type LoginLinkReply, type SummaryReply } from './control-protocol';

/**
 * The status window's access on the control channel: the agent's severity (what the tray shows) and
 * a one-time login link to its window, for whoever the operating system lets open the channel (the
 * agent's own account, root / SYSTEM and, on Windows, an elevated administrator: control-protocol.ts).
 * This is how the desktop app of a PC whose agent runs as a service, and `admin-url`, reach an agent
 * whose data folder they may not read. Each link handed out is audited with who asked.
 */

function askedBy(raw: unknown, via: string): string {
  const parsed = actorSchema.safeParse(typeof raw === 'string' ? raw : undefined);
  return `${parsed.success ? parsed.data : 'operator'} (${via})`;
}

export function controlAccessRoutes(agent: Agent, log: Logger): Router.Router {
  const router = Router();

  router.get('/summary', (_req, res) => {
    const now = new Date();
    const reply = buildStatusReply(agent, DEFAULT_PANEL_SERVICES, log, now);
    const severity = severityOf(reply, now, clockTime);
    const body: z.infer<typeof SummaryReply> = {
      generatedAt: reply.generatedAt,
      light: severity.light,
      label: severity.label,
      headline: severity.headline,
      reasons: severity.reasons.map((r) => ({ id: r.id, light: r.light, text: r.text })),
      paused: reply.paused,
      pausedBy: reply.pausedBy ?? null,
      pausedAt: reply.pausedAt ?? null,
      adminUrl: agent.service<AdminService>('admin')?.url ?? null,
    };
    sendJson(res, 200, body);
  });

  router.post('/login-link', jsonBody({ limit: 16 * 1024, anyType: true }), (req, res) => {
    const parsed = LoginLinkBody.safeParse(bodyOf(req));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new AppError('invalid_parameter', 400, `${issue?.path.map(String).join('.') || '(body)'}: ${issue?.message ?? 'invalid'}`);
    }
    const admin = agent.service<AdminService>('admin');
    if (!admin || !agent.config.admin.enabled) throw new AppError('admin_disabled', 409, 'the status window is disabled (admin.enabled is false)');
    const link = admin.loginLink(parsed.data.rotate);
    if (!link) throw new AppError('admin_not_running', 503, 'the status window is not running yet: try again in a moment');
    const actor = askedBy(req.headers[ACTOR_HEADER], parsed.data.via);
    audit(agent.core.agentDb, actor, 'login-link', { rotated: parsed.data.rotate, expiresAt: link.expiresAt.toISOString() });
    // The link is a credential: the log says who asked, never the link.
    log.info(`status window login link handed to ${actor}${parsed.data.rotate ? ' after replacing the access token' : ''}`);
    const body: z.infer<typeof LoginLinkReply> = { url: link.url, expiresAt: link.expiresAt.toISOString(), rotated: parsed.data.rotate };
    sendJson(res, 200, body);
  });

  return router;
}
