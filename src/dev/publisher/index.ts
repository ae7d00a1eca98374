/**
 * The publisher simulator: generator (seeded), reference model (day-by-day expected state) and
 * delivery engine (retry with back-off and jitter, fault knobs). Used by `pos-sync-agent dev
 * publisher`, the fault and load suites and the benchmarks.
 */
import type { LocationChain } from './generator';
import { ReferenceModel } from './reference';

export * from './generator';
export * from './reference';
export * from './delivery';
export { Prng } from './prng';
export { dateOf, dayOf, todayInZone } from './days';

/** The expected end state once every update of every chain has been applied in chain order. */
export function referenceFor(chains: readonly LocationChain[]): ReferenceModel {
  const model = new ReferenceModel();
  for (const chain of chains) for (const update of chain.updates) model.apply(update.body);
  return model;
}
