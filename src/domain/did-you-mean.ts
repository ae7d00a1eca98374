/** "Did you mean" for a mistyped command, option or configuration key. Pure. */

/** Edit distance (insertions, deletions, substitutions, swaps of neighbours), for "did you mean". */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest of `names` to a mistyped `word` (at most two edits, and fewer than half its length), or null. */
export function didYouMean(word: string, names: readonly string[]): string | null {
  let best: { name: string; distance: number } | null = null;
  for (const name of names) {
    const distance = editDistance(word.toLowerCase(), name.toLowerCase());
    if (distance <= 2 && distance < Math.max(2, word.length / 2) && (best === null || distance < best.distance)) best = { name, distance };
  }
  return best?.name ?? null;
}

