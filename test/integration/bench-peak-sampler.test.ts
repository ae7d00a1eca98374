import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { parseStatusMemory, PeakSampler, statusMemory, type PeakParts } from '../../bench/peak-sampler';

const ALLOC_BYTES = 48e6;

/** A Node process that fills ALLOC_BYTES of anonymous memory when told "alloc", answering "done". */
function holder(): { child: ChildProcess; tell: (what: 'alloc') => Promise<void> } {
  const script = `process.stdin.setEncoding('utf8').on('data', () => {
    globalThis.kept = Buffer.alloc(${ALLOC_BYTES}, 1);
    process.stdout.write('done\\n');
  });
  process.stdout.write('ready\\n');`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  return {
    child,
    tell: async (what) => {
      child.stdin!.write(`${what}\n`);
      assert.equal(String((await once(child.stdout!, 'data'))[0]).trim(), 'done');
    },
  };
}

async function ready(child: ChildProcess): Promise<void> {
  assert.equal(String((await once(child.stdout!, 'data'))[0]).trim(), 'ready');
}

const settle = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A holder sampled from its idle on while `during` runs; the sampler is always stopped (its interval would keep this process alive). */
async function sampledAround(during: (sampler: PeakSampler, tell: (what: 'alloc') => Promise<void>) => Promise<void>): Promise<PeakParts> {
  const { child, tell } = holder();
  try {
    await ready(child);
    const sampler = new PeakSampler(child.pid!, statusMemory(child.pid!));
    sampler.start();
    try {
      await during(sampler, tell);
    } catch (err) {
      sampler.stop();
      throw err;
    }
    return sampler.stop();
  } finally {
    child.kill();
  }
}

describe("the bench's peak sampler (bench/peak-sampler.ts)", () => {
  it('reads the memory lines of /proc/PID/status, and names a missing one', () => {
    const status = 'Name:\tnode\nVmHWM:\t  200 kB\nVmRSS:\t  150 kB\nRssAnon:\t  100 kB\nRssFile:\t  40 kB\nRssShmem:\t  10 kB\n';
    assert.deepEqual(parseStatusMemory(status), { rssBytes: 150 * 1024, anonymousBytes: 100 * 1024, fileBytes: 50 * 1024, highWaterBytes: 200 * 1024 });
    assert.throws(() => parseStatusMemory(status.replace(/RssAnon.*\n/, '')), /no RssAnon/);
  });

  it("puts memory filled after the 200 in the apply's part, as anonymous memory, and not in the receipt's", { timeout: 60_000 }, async () => {
    const parts = await sampledAround(async (sampler, tell) => {
      sampler.ack();
      await tell('alloc');
      await settle(50);
    });
    assert.ok(parts.highestSampleOverIdleBytes >= ALLOC_BYTES * 0.9, `highest sample over idle ${parts.highestSampleOverIdleBytes}`);
    assert.ok(parts.anonymousOverIdleBytes >= ALLOC_BYTES * 0.9, `anonymous over idle ${parts.anonymousOverIdleBytes}`);
    assert.ok(Math.abs(parts.fileOverIdleBytes) < ALLOC_BYTES * 0.1, `files over idle ${parts.fileOverIdleBytes}`);
    assert.equal(parts.highestSampleAfterAck, true);
    assert.ok(parts.untilAckOverIdleBytes < ALLOC_BYTES * 0.5, `by the 200 ${parts.untilAckOverIdleBytes}`);
    assert.equal(parts.applierThreadAtHighest, false, 'a process without an "applier" thread');
    assert.equal(parts.applierThreadAtAck, false);
    assert.ok(parts.samples >= 3);
  });

  it("puts memory filled before the 200 in the receipt's part", { timeout: 60_000 }, async () => {
    const parts = await sampledAround(async (sampler, tell) => {
      await tell('alloc');
      await settle(50);
      sampler.ack();
      await settle(50);
    });
    assert.ok(parts.untilAckOverIdleBytes >= ALLOC_BYTES * 0.9, `by the 200 ${parts.untilAckOverIdleBytes}`);
    assert.ok(parts.highestSampleOverIdleBytes >= ALLOC_BYTES * 0.9, `highest sample over idle ${parts.highestSampleOverIdleBytes}`);
  });
});
