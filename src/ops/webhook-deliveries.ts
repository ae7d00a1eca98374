import fs from 'node:fs';
import { databasePath, openReadOnly, storeFilePath, tableExists } from '../store/database';

/**
 * Whether head office has been delivering to this data folder without a token (ops/webhook-token.ts):
 * agent.db's inbox holds a webhook delivery, or 0.1's single till file is there. A folder that only
 * this version's own commands filled (support's `import` before the first start) is not one.
 */
export function tookWebhookDeliveries(dataDir: string): boolean {
  const agentFile = storeFilePath(dataDir, 'agent');
  if (!fs.existsSync(agentFile)) return fs.existsSync(databasePath(dataDir));
  const db = openReadOnly(agentFile);
  try {
    if (!tableExists(db, 'inbox')) return false;
    return db.prepare("SELECT 1 FROM inbox WHERE source = 'webhook' LIMIT 1").get() !== undefined;
  } finally {
    db.close();
  }
}
