/**
 * When to retry a call to the employee interface and how long to wait: pure, so every rule is tested
 * without a clock.
 */

/** Statuses worth another attempt: rate limiting and server-side failures. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || (status >= 500 && status <= 599);
}

/**
 * Retry-After as milliseconds from `now`: delta-seconds or an HTTP date. null when absent or
 * unreadable (the caller then uses its own back-off). A date in the past means "now" (0).
 */
export function parseRetryAfter(header: string | null | undefined, now: number = Date.now()): number | null {
  if (header === null || header === undefined) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/**
 * Capped exponential back-off with "equal jitter": half the step is fixed, half random, so retries
 * of many agents spread out but never collapse to zero. attempt is 1 for the first retry.
 */
export function backoffDelay(attempt: number, baseMs: number, capMs: number, random: () => number = Math.random): number {
  const step = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

/**
 * The wait before the next attempt, or null to stop: Retry-After is honoured exactly when given, but
 * one longer than the cap ends the retries (waiting less would break the server's request).
 */
export function nextDelay(options: {
  attempt: number;
  retries: number;
  baseMs: number;
  capMs: number;
  retryAfterMs: number | null;
  random?: () => number;
}): number | null {
  if (options.attempt > options.retries) return null;
  if (options.retryAfterMs !== null) return options.retryAfterMs <= options.capMs ? options.retryAfterMs : null;
  return backoffDelay(options.attempt, options.baseMs, options.capMs, options.random);
}
