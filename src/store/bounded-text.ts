/**
 * Texts a sender chooses (its Content-Type, its X-Forwarded-For, a key name in its body) reach the
 * delivery history, the quarantine and the refusal's answer. Each is cut to a bounded length, so a
 * refused call stores (and is answered) bounded text whatever it sent: a flood of refusals cannot fill
 * the disk with what their headers and keys carry (docs/operations.md, "Refused bodies cannot fill
 * the disk").
 */

/** A sender's address as stored: the connection's address and what X-Forwarded-For says. */
export const MAX_SENDER_CHARS = 200;
/** A Content-Type as stored, or as quoted in a refusal's reason. */
export const MAX_CONTENT_TYPE_CHARS = 100;
/** The field a refusal names (a key of the body), as stored and as answered. */
export const MAX_FIELD_CHARS = 100;
/** A refusal's reason as stored and as answered. */
export const MAX_REASON_CHARS = 300;

/** What ends a cut text, so a reader knows it was longer. */
export const CUT_MARKER = '…(cut)';

/**
 * `text` if it has at most `max` characters, else its first characters and CUT_MARKER, `max`
 * characters in all. Counted in whole characters (code points): a cut never splits a surrogate pair,
 * so what is stored and answered is valid text.
 */
export function cutText(text: string, max: number): string {
  // Most texts are short: no need to look at their characters one by one.
  if (text.length <= max) return text;
  const keep = Math.max(0, max - [...CUT_MARKER].length);
  let out = '';
  let chars = 0;
  for (const ch of text) {
    if (chars === keep) return `${out}${CUT_MARKER}`;
    out += ch;
    chars += 1;
  }
  return text;
}

/** cutText for a value that may be absent. */
export function cutOptional(text: string | null, max: number): string | null {
  return text === null ? null : cutText(text, max);
}
