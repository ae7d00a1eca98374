import fs from 'node:fs';
import type { AuditRecord } from '../domain/audit-text';
import { openDatabase, storeFilePath, type Db } from './database';

/** Audit records, newest first (agent.db's audit_log): `pos-sync-agent audit` and the Activity view. */
export function auditRecords(agent: Db, options: { readonly limit: number; readonly beforeId?: number | null; readonly since?: string | null }): AuditRecord[] {
  const rows = agent
    .prepare<{ limit: number; beforeId: number | null; since: string | null }, { id: number; at: string; actor: string; action: string; details: string | null }>(
      `SELECT id, at, actor, action, details FROM audit_log
       WHERE (@beforeId IS NULL OR id < @beforeId) AND (@since IS NULL OR at >= @since)
       ORDER BY id DESC LIMIT @limit`,
    )
    .all({ limit: options.limit, beforeId: options.beforeId ?? null, since: options.since ?? null });
  return rows.map((r) => {
    let details: Record<string, unknown> = {};
    try {
      const parsed: unknown = r.details ? JSON.parse(r.details) : {};
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) details = parsed as Record<string, unknown>;
    } catch {
      details = { text: r.details };
    }
    return { id: r.id, at: r.at, actor: r.actor, action: r.action, details };
  });
}

/** Records an operator's action (who, what, when). */
export function audit(agent: Db, actor: string, action: string, details: Record<string, unknown> = {}, at: Date = new Date()): void {
  agent.prepare('INSERT INTO audit_log (at, actor, action, details) VALUES (?, ?, ?, ?)').run(at.toISOString(), actor, action, JSON.stringify(details));
}

/**
 * Records an action taken on a data folder from outside the agent (the CLI's secrets commands), when
 * the folder has an agent.db; a folder the agent never ran on has no log to write to yet.
 */
export function auditOnDataFolder(dataDir: string, actor: string, action: string, details: Record<string, unknown> = {}): boolean {
  const file = storeFilePath(dataDir, 'agent');
  if (!fs.existsSync(file)) return false;
  const db = openDatabase(file, { kind: 'agent', migrate: false });
  try {
    audit(db, actor, action, details);
    return true;
  } finally {
    db.close();
  }
}
