import { performance } from 'node:perf_hooks';
import type { Steps } from '../domain/steps';

/**
 * Runs `steps` (src/domain/steps.ts) in slices of about `sliceMs` of this thread's time, letting the
 * event loop run what waits (other requests, their I/O) between slices: a large body's check on the
 * webhook's thread, so small deliveries are answered during it.
 */
export async function runInSlices<T>(steps: Steps<T>, sliceMs: number): Promise<T> {
  let sliceStarted = performance.now();
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    if (performance.now() - sliceStarted >= sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStarted = performance.now();
    }
  }
}
