import v8 from 'node:v8';

/**
 * Imported first by every entry that runs the agent (`pos-sync-agent serve` through bin/, the
 * desktop app's agent process, the test and bench harness): V8 settings for a process that runs for
 * months and idles most of the time. It has no imports of the agent's own, so it runs before they
 * load. Each flag here is one V8 reads after start-up, which is what makes setting it at run time take
 * effect (a launch flag would be needed in every launcher: bin/, the service, the desktop app).
 * `npm run bench` measures the idle memory these settings are for (docs/performance.md, "Where the
 * memory goes").
 */

/**
 * The main thread's young generation keeps the size V8 starts it with. The main thread keeps the
 * status window, the control channel and the timers; what it allocates dies young or lives for the
 * whole run, and the heavy work (receipts, bodies, applies) runs on worker threads whose young
 * generation resourceLimits bound (YOUNG_GENERATION_MB in thread-client.ts). Left alone, loading the
 * agent's modules grows the young generation to V8's largest, and it never shrinks. V8 reads the
 * growth factor each time it considers growing the young generation.
 */
v8.setFlagsFromString('--semi-space-growth-factor=1');

/**
 * Worker threads started from here on (the webhook's and the applier's) compile their hot functions
 * with V8's optimising compilers (Maglev and Turbofan) on their own thread, not on V8's shared
 * background threads. Each background thread compiles in memory it takes from its own malloc arena,
 * and glibc keeps what an arena grew to: an apply's compilations, spread over every background thread, stayed in the process
 * for good after the applier thread ended. On the thread's own arena they leave one arena's worth,
 * which the next applier thread reuses. The compiled code is the same; the thread waits for its own
 * compilations, which `npm run bench` weighs in its apply and small-ack figures. V8 reads these when
 * it makes an isolate, so the main thread's own isolate keeps compiling in the background.
 */
v8.setFlagsFromString('--no-concurrent-recompilation');

/**
 * Hot functions are optimised by Maglev only, never by Turbofan, on every thread. Turbofan's own code
 * is in the node binary: once an apply's functions grew hot enough for it, those pages were paged in
 * and stayed resident for as long as the process ran, and its compilations took their working memory
 * from the applying thread's malloc arena, which glibc keeps. Maglev's code is less optimised than
 * Turbofan's and takes less to compile: `npm run bench` weighs the trade in its apply and ack figures
 * (docs/performance.md, "Where the memory goes"). V8 reads this flag each time it decides to optimise a function (`--max-opt`, read
 * only when V8 starts, has no effect set here).
 */
v8.setFlagsFromString('--no-turbofan');
