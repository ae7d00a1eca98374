/**
 * Work done in steps: a generator that yields between steps and returns its result. Whoever runs it
 * decides what happens between steps: nothing (runSteps), or other work on the same thread
 * (runInSlices, src/threads/slices.ts), so a long check does not hold up a thread's event loop.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs every step at once and returns the result. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}
