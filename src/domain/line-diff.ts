/**
 * A line diff for comparing two bodies of a conflicting update (CLI and status window). Pure and
 * free of Node imports: the renderer bundles this file. Bodies can be megabytes, so the lines common
 * to both ends are trimmed first (a resend usually differs in a few places) and the exact
 * longest-common-subsequence is computed only when what is left is small; otherwise the middle is
 * shown as removed and added whole, which is still correct, only less precise.
 */

import { prettyJson } from './json-pretty';

export interface DiffLine {
  readonly kind: 'same' | 'removed' | 'added';
  readonly text: string;
}

/** Cells of the LCS table above which the middle part is not aligned line by line. */
const MAX_LCS_CELLS = 4_000_000;

export function diffLines(a: readonly string[], b: readonly string[]): DiffLine[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const out: DiffLine[] = a.slice(0, start).map((text) => ({ kind: 'same', text }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  if (midA.length * midB.length <= MAX_LCS_CELLS) out.push(...lcsDiff(midA, midB));
  else out.push(...midA.map((text): DiffLine => ({ kind: 'removed', text })), ...midB.map((text): DiffLine => ({ kind: 'added', text })));
  out.push(...a.slice(endA).map((text): DiffLine => ({ kind: 'same', text })));
  return out;
}

function lcsDiff(a: readonly string[], b: readonly string[]): DiffLine[] {
  const n = a.length;
  const m = b.length;
  // lengths[i * (m + 1) + j]: LCS length of a[i..] and b[j..].
  const lengths = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lengths[i * (m + 1) + j] = a[i] === b[j] ? lengths[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lengths[(i + 1) * (m + 1) + j]!, lengths[i * (m + 1) + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i]! });
      i++;
      j++;
    } else if (lengths[(i + 1) * (m + 1) + j]! >= lengths[i * (m + 1) + j + 1]!) out.push({ kind: 'removed', text: a[i++]! });
    else out.push({ kind: 'added', text: b[j++]! });
  }
  while (i < n) out.push({ kind: 'removed', text: a[i++]! });
  while (j < m) out.push({ kind: 'added', text: b[j++]! });
  return out;
}

/**
 * A body as lines to compare: JSON re-indented (so the bytes' line breaks do not hide or invent
 * differences, while every number and string stays as written), else as sent.
 */
export function bodyLines(text: string): string[] {
  return (prettyJson(text.replace(/^\uFEFF/, '')) ?? text).split(/\r?\n/);
}

/** Only the changes with `context` unchanged lines around each; longer unchanged runs become one `skipped` count. */
export function diffHunks(lines: readonly DiffLine[], context = 3): (DiffLine | { readonly kind: 'skipped'; readonly count: number })[] {
  const near = new Uint8Array(lines.length);
  lines.forEach((l, i) => {
    if (l.kind === 'same') return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) near[k] = 1;
  });
  const out: (DiffLine | { kind: 'skipped'; count: number })[] = [];
  let skipped = 0;
  lines.forEach((l, i) => {
    if (near[i]) {
      if (skipped > 0) out.push({ kind: 'skipped', count: skipped });
      skipped = 0;
      out.push(l);
    } else skipped++;
  });
  if (skipped > 0) out.push({ kind: 'skipped', count: skipped });
  return out;
}
