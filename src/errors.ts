/**
 * Every error the agent means to show a caller carries a stable id (for support and scripts) and the
 * HTTP status it maps to. One middleware per server turns these into JSON; anything else becomes a
 * generic 500 without details, so a stack trace never reaches a client.
 */
export class AppError extends Error {
  constructor(
    readonly id: string,
    readonly status: number,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  toJSON(): { error: { id: string; message: string } & Record<string, unknown> } {
    return { error: { id: this.id, message: this.message, ...this.details } };
  }
}

export class ConfigError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`invalid configuration: ${field}: ${message}`);
    this.name = 'ConfigError';
  }
}

/** SQLite result codes that mean "could not store right now", as opposed to a bug in our SQL. */
const STORAGE_FAILURE_CODES = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|CANTOPEN|READONLY|NOMEM|PROTOCOL|CORRUPT|NOTADB|AUTH)/;

export function isStorageFailure(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (STORAGE_FAILURE_CODES.test(code) || code === 'ENOSPC' || code === 'EIO' || code === 'EROFS')) return true;
  return false;
}

export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
