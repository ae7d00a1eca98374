import { parseConfig } from '../../src/config/load';
import { AgentCore } from '../../src/core';
import { silentLogger } from '../../src/log';

/**
 * Creates a site's data in `dataDir` (its databases, migrated) as the agent's first start does, so
 * that commands which refuse a folder without data (cli/site-check.ts) have a site to act on.
 */
export function createSiteData(dataDir: string): void {
  new AgentCore(parseConfig({ dataDir }), silentLogger).close();
}
