import assert from 'node:assert/strict';

/** What a parser did with an input: its value, or a refusal (which must be a SyntaxError, as JSON.parse's). */
export function parseOutcome(f: () => unknown): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: f() };
  } catch (err) {
    assert.ok(err instanceof SyntaxError, `only SyntaxError may escape, got ${String(err)}`);
    return { ok: false };
  }
}
