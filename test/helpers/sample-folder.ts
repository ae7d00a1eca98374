import { AgentCore } from '../../src/core';
import { silentLogger } from '../../src/log';
import { sampleBodies, tempDir, testConfig } from './fixtures';

/** A new data folder (in a temporary folder named with `prefix`) with the three sample updates imported and applied by this build. */
export function folderWithSamples(prefix: string): string {
  const dir = tempDir(prefix);
  const core = new AgentCore(testConfig({ dataDir: dir }), silentLogger);
  try {
    for (const { raw } of sampleBodies()) core.importPayload(raw, 'test');
  } finally {
    core.close();
  }
  return dir;
}
