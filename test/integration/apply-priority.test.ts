import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { Agent } from '../../src/agent';
import type { Logger } from '../../src/log';
import { testConfig } from '../helpers/fixtures';

/**
 * sync.applyPriority on a real agent: the applier's worker thread lowers its own kernel priority, and
 * only its own (Linux keeps a nice value per thread; docs/operations.md, "CPU priority"). Read back
 * from /proc, as `ps -L` shows it.
 */
function threadNices(): Map<string, number[]> {
  const byName = new Map<string, number[]>();
  for (const tid of fs.readdirSync('/proc/self/task')) {
    let name: string;
    let stat: string;
    try {
      name = fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // a thread that ended between the listing and the read
    }
    // Fields after "(comm) ": state is field 3, nice field 19.
    const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    byName.set(name, [...(byName.get(name) ?? []), nice]);
  }
  return byName;
}

function recordingLogger(lines: string[]): Logger {
  const put = (m: string): void => void lines.push(m);
  return { error: put, warn: put, info: put, verbose: put, debug: put };
}

async function withAgent(applyPriority: 'background' | 'normal' | undefined, check: (lines: string[]) => void): Promise<void> {
  const lines: string[] = [];
  const agent = new Agent(testConfig(applyPriority ? { sync: { applyPriority } } : {}), recordingLogger(lines));
  await agent.start();
  try {
    // The thread reports its priority as it starts; wait for that line.
    for (let i = 0; i < 200 && !lines.some((l) => l.startsWith('the applier ')); i++) await new Promise((r) => setTimeout(r, 10));
    check(lines);
  } finally {
    await agent.stop();
  }
}

describe('sync.applyPriority', { skip: process.platform !== 'linux' && 'per-thread priorities are read from Linux /proc' }, () => {
  it('by default lowers the applier thread to nice 10 and leaves the webhook thread alone', async () => {
    const before = threadNices().get('MainThread');
    await withAgent(undefined, (lines) => {
      const nices = threadNices();
      // Only ever lowered: under a test runner already started below nice 10 the thread keeps its own.
      const expected = Math.max(10, ...(before ?? [0]));
      assert.deepEqual(nices.get('applier'), [expected], JSON.stringify([...nices]));
      assert.equal(nices.get('inbox'), undefined, 'the inbox runs on the webhook thread');
      assert.deepEqual(nices.get('receiver'), before, 'the webhook receiver thread answers at normal priority');
      assert.deepEqual(nices.get('MainThread'), before);
      const said = expected === 10 ? /^the applier runs at background priority \(its thread \d+, nice 10\)/ : /^the applier keeps the lower priority it started with/;
      assert.ok(lines.some((l) => said.test(l)), lines.join('\n'));
    });
  });

  it('"normal" leaves the applier thread as the process started', async () => {
    const before = threadNices().get('MainThread');
    await withAgent('normal', (lines) => {
      assert.deepEqual(threadNices().get('applier'), before);
      assert.ok(lines.includes('the applier runs at normal priority (sync.applyPriority is "normal")'), lines.join('\n'));
    });
  });
});
