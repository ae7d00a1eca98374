/**
 * A small seeded PRNG (mulberry32) so a simulator run, a fault schedule or a benchmark payload can be
 * reproduced exactly from its seed. Not for anything security related.
 */
export class Prng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max] (inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(values: readonly T[]): T {
    if (values.length === 0) throw new RangeError('pick from an empty list');
    return values[Math.floor(this.next() * values.length)] as T;
  }

  /** Fisher-Yates, in place. */
  shuffle<T>(values: T[]): T[] {
    for (let i = values.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [values[i], values[j]] = [values[j] as T, values[i] as T];
    }
    return values;
  }

  /** An independent generator derived from this one (so adding draws in one place does not shift another). */
  fork(salt: number): Prng {
    return new Prng((Math.imul(this.seed ^ 0x9e3779b9, 0x85ebca6b) + salt * 0xc2b2ae35) >>> 0);
  }
}
