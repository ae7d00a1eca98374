import v8 from 'node:v8';

/**
 * Imported first by every entry that runs the agent (`pos-sync-agent serve` through bin/, the
 * desktop app's agent process, the test and bench harness): from here on, V8 does not grow this
 * process's young generation past the size it starts with.
 *
 * The main thread of a running agent keeps the status window, the control channel and the timers;
 * what it allocates dies young or lives for the whole run, and the heavy work (receipts, bodies,
 * applies) runs on worker threads whose young generation resourceLimits bound
 * (YOUNG_GENERATION_MB in thread-client.ts). Left alone, loading the agent's modules grows the main
 * thread's young generation to V8's largest, and it never shrinks: a resident cost for the whole
 * run, for nothing (docs/performance.md, "Where the memory goes"; `npm run bench` prints the idle
 * RSS). It must run before those modules load, so this file has no imports of the agent's own.
 *
 * The growth factor is read by V8 each time it considers growing the young generation, so setting it
 * at run time takes effect (a size limit such as --max-semi-space-size is fixed when the heap is
 * made and would need a launch flag in every launcher).
 */
v8.setFlagsFromString('--semi-space-growth-factor=1');
