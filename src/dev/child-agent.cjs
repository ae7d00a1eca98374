'use strict';
/**
 * A real agent in its own process, for the fault suites and benchmarks: they SIGKILL it, restart it,
 * inject I/O faults into it (fiu-run) and measure its memory. Usage:
 *   node --import tsx src/dev/child-agent.cjs CONFIG.json        (the TypeScript sources)
 *   POS_SYNC_CHILD_BUILT=1 node src/dev/child-agent.cjs CONFIG.json   (the compiled build in dist/)
 * The benchmarks measure the build, as `pos-sync-agent serve` and the desktop app run it: tsx's loader,
 * in each of the agent's threads, adds memory that no installed agent has (bench/mem-probe shows it).
 * That is why this harness is plain JavaScript: it needs no loader of its own.
 * Prints `READY <webhook url>` on stdout once listening. Over IPC (when spawned with an ipc channel)
 * it answers { cmd: 'stats' } with its peak RSS, and { cmd: 'max_page_count', value } sets that
 * pragma on the inbox's agent.db connection (the webhook's thread) (the disk-full fault). POS_SYNC_TEST_MAX_PAGE_COUNT sets it at start-up.
 * { cmd: 'eld-start' } / { cmd: 'eld-stop' } measure the event-loop delay of the agent's receiver thread.
 * This test-only hook lives here, not in the site configuration.
 */
const fs = require('node:fs');
const path = require('node:path');

const root = process.env.POS_SYNC_CHILD_BUILT === '1' ? path.join(__dirname, '..', '..', 'dist', 'src') : path.join(__dirname, '..');
// As `pos-sync-agent serve` and the desktop app's agent process do, before the agent's modules load.
require(path.join(root, 'threads', 'agent-v8-flags'));
const { Agent } = require(path.join(root, 'agent'));
const { parseConfig } = require(path.join(root, 'config', 'load'));
const { silentLogger, stderrLogger } = require(path.join(root, 'log'));

/**
 * This process's own peak RSS. On Linux, /proc/self/status's VmHWM: getrusage's maxRSS
 * (process.resourceUsage) also counts the RSS of the process that spawned this one, as it was when
 * it forked, since the kernel carries the larger into the new program at exec; a bench that holds a
 * large publication would be read as this agent's peak. Elsewhere maxRSS is the process's own.
 */
function peakRssBytes() {
  if (process.platform === 'linux') {
    const hwm = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'));
    if (!hwm) throw new Error('no VmHWM in /proc/self/status');
    return Number(hwm[1]) * 1024;
  }
  return process.resourceUsage().maxRSS * 1024;
}

async function main() {
  const file = process.argv[2];
  if (!file) throw new Error('usage: child-agent.cjs CONFIG.json');
  const config = parseConfig(JSON.parse(fs.readFileSync(file, 'utf8')));
  const agent = new Agent(config, process.env.CHILD_AGENT_LOG === '1' ? stderrLogger : silentLogger);
  const maxPages = process.env.POS_SYNC_TEST_MAX_PAGE_COUNT;
  await agent.start();
  // The receiver stores through the inbox on its own thread: cap that thread's agent.db connection.
  if (maxPages) await agent.inbox.setMaxPageCount(Number(maxPages));
  process.stdout.write(`READY ${agent.webhook?.url}\n`);
  // The receiver thread's event-loop delay (the bench measures it during a large apply on the applier thread).
  process.on('message', (msg) => {
    const failed = (cmd) => (err) => process.send?.({ cmd, error: String((err && err.message) || err) });
    if (msg.cmd === 'eld-start') {
      void agent.receiverLoopDelay('start').then(() => process.send?.({ cmd: 'eld-start' }), failed('eld-start'));
    } else if (msg.cmd === 'eld-stop') {
      void agent.receiverLoopDelay('stop').then((d) => process.send?.({ cmd: 'eld-stop', p50Ms: d?.p50Ms ?? 0, p99Ms: d?.p99Ms ?? 0, maxMs: d?.maxMs ?? 0 }), failed('eld-stop'));
    } else if (msg.cmd === 'stats') {
      process.send?.({
        cmd: 'stats',
        maxRssBytes: peakRssBytes(),
        rssBytes: process.memoryUsage().rss,
        synchronous: agent.core.agentDb.pragma('synchronous', { simple: true }),
      });
    } else if (msg.cmd === 'thread-heaps') {
      void agent.threadHeaps().then((threads) => process.send?.({ cmd: 'thread-heaps', threads }), failed('thread-heaps'));
    } else if (msg.cmd === 'max_page_count') {
      // The cap holds for the webhook thread's connection until that thread is restarted.
      Promise.resolve()
        .then(() => agent.inbox.setMaxPageCount(Number(msg.value)))
        .then((pages) => process.send?.({ cmd: 'max_page_count', value: pages }), failed('max_page_count'));
    }
  });
  const stop = () => {
    void agent.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err) => {
  process.stderr.write(`child agent failed: ${(err && err.stack) || String(err)}\n`);
  process.exit(1);
});
