import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { CRASH_EXIT_CODE, TEST_FAULT_ENV } from '../../../src/ops/crash';
import { isInstanceLocked } from '../../../src/ops/instance';
import { pidFile } from '../../../src/ops/paths';
import { startChildAgent, writeConfig } from '../../helpers/child-agent';
import { tempDir } from '../../helpers/fixtures';

/** Issue 10, point 12: an uncaught exception or unhandled rejection logs and exits for a clean restart. */

function exited(child: { exitCode: number | null; signalCode: string | null; once(e: 'exit', f: (code: number | null) => void): unknown }): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/**
 * The file the first stack frame in the log names. serve runs the bundle (dist/agent/cli.js), whose
 * frames name a line of it: esbuild opens each module it bundled with a `// <its path>` comment, so the
 * nearest such line above names the module the frame is in, as a developer reading a site's log
 * would find it in the shipped bundle.
 */
function thrownIn(log: string): string | null {
  const frame = /at .*?([^\s(]+\.(?:ts|js)):(\d+):\d+/.exec(log);
  if (!frame) return null;
  const [, file, line] = frame;
  if (!/[\\/]dist[\\/]agent[\\/]cli\.js$/.test(file!)) return path.basename(file!);
  const lines = fs.readFileSync(file!, 'utf8').split('\n').slice(0, Number(line));
  const opening = lines.reverse().find((l) => /^\/\/ \S+\.js$/.test(l));
  return opening ? path.basename(opening.slice(3)) : null;
}

describe('a crash ends the process (spawned serve, test-only fault)', () => {
  for (const [fault, kind, errorName] of [
    ['uncaught-exception', 'uncaught exception', 'TypeError'],
    ['unhandled-rejection', 'unhandled rejection', 'RangeError'],
  ] as const) {
    it(`${kind}: logged without personal data, exit ${CRASH_EXIT_CODE}, pid file and lock gone`, async () => {
      const dir = tempDir();
      const dataDir = path.join(dir, 'data');
      const agent = await startChildAgent(writeConfig(dir, { dataDir, webhook: { port: 0 }, admin: { port: 0 } }), { NODE_ENV: 'test', [TEST_FAULT_ENV]: fault });
      const code = await exited(agent.child);
      assert.equal(code, CRASH_EXIT_CODE, agent.output());
      const log = fs.readFileSync(path.join(dataDir, 'logs', 'agent.log'), 'utf8');
      assert.match(log, new RegExp(`${kind}: ${errorName}; message withheld \\(it may hold personal data\\)`));
      assert.equal(thrownIn(log), 'crash.js', 'where it was thrown');
      assert.match(log, new RegExp(`exiting \\(code ${CRASH_EXIT_CODE}\\) so the service manager restarts a clean process`));
      for (const personal of ['Jane Example', 'jane.example@example.com', 'QQ123456C']) {
        assert.ok(!log.includes(personal), `${personal} is not in the log`);
        assert.ok(!agent.output().includes(personal), `${personal} is not on the console`);
      }
      assert.equal(fs.existsSync(pidFile(dataDir)), false);
      assert.equal(isInstanceLocked(dataDir), false);
    });
  }

  it('the fault cannot be armed outside NODE_ENV=test (the unit sets production)', async () => {
    const dir = tempDir();
    const agent = await startChildAgent(writeConfig(dir, { dataDir: path.join(dir, 'data'), webhook: { port: 0 }, admin: { port: 0 } }), {
      NODE_ENV: 'production',
      [TEST_FAULT_ENV]: 'uncaught-exception',
    });
    // Still serving well after the fault would have fired (50 ms after start).
    for (let i = 0; i < 5; i++) {
      assert.equal((await fetch(new URL('/healthz', agent.url))).status, 200);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(agent.child.exitCode, null);
    await agent.kill('SIGTERM');
    assert.equal(agent.child.exitCode, 0);
  });
});
