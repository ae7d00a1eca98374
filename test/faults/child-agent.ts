/**
 * A real agent in its own process, for the fault suites and benchmarks: they SIGKILL it, restart it,
 * inject I/O faults into it (fiu-run) and measure its memory. Usage:
 *   node --import tsx test/faults/child-agent.ts CONFIG.json
 * Prints `READY <webhook url>` on stdout once listening. Over IPC (when spawned with an ipc channel)
 * it answers { cmd: 'stats' } with its peak RSS, and { cmd: 'max_page_count', value } sets that
 * pragma on the inbox thread's agent.db connection (the disk-full fault). POS_SYNC_TEST_MAX_PAGE_COUNT sets it at start-up.
 * { cmd: 'eld-start' } / { cmd: 'eld-stop' } measure the event-loop delay of the process's main thread.
 * This test-only hook lives here, not in the site configuration.
 */
import fs from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Agent } from '../../src/agent';
import { parseConfig } from '../../src/config/load';
import { silentLogger, stderrLogger } from '../../src/log';

async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file) throw new Error('usage: child-agent.ts CONFIG.json');
  const config = parseConfig(JSON.parse(fs.readFileSync(file, 'utf8')));
  const agent = new Agent(config, process.env.CHILD_AGENT_LOG === '1' ? stderrLogger : silentLogger);
  const maxPages = process.env.POS_SYNC_TEST_MAX_PAGE_COUNT;
  await agent.start();
  // The receiver stores through the inbox thread: cap that thread's agent.db connection.
  if (maxPages) await agent.inbox.setMaxPageCount(Number(maxPages));
  process.stdout.write(`READY ${agent.webhook?.url}\n`);
  // The receiver's event-loop delay (the bench measures it during a large apply on the applier thread).
  let loopDelay: IntervalHistogram | null = null;
  process.on('message', (raw) => {
    const msg = raw as { cmd: string; value?: number };
    if (msg.cmd === 'eld-start') {
      loopDelay = monitorEventLoopDelay({ resolution: 1 });
      loopDelay.enable();
      process.send?.({ cmd: 'eld-start' });
    } else if (msg.cmd === 'eld-stop') {
      loopDelay?.disable();
      process.send?.({ cmd: 'eld-stop', p50Ms: (loopDelay?.percentile(50) ?? 0) / 1e6, p99Ms: (loopDelay?.percentile(99) ?? 0) / 1e6, maxMs: (loopDelay?.max ?? 0) / 1e6 });
      loopDelay = null;
    } else if (msg.cmd === 'stats') {
      process.send?.({
        cmd: 'stats',
        maxRssBytes: process.resourceUsage().maxRSS * 1024,
        rssBytes: process.memoryUsage().rss,
        synchronous: agent.core.agentDb.pragma('synchronous', { simple: true }),
      });
    } else if (msg.cmd === 'max_page_count') {
      void agent.inbox.setMaxPageCount(Number(msg.value)).then((pages) => process.send?.({ cmd: 'max_page_count', value: pages }));
    }
  });
  const stop = (): void => {
    void agent.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(`child agent failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
