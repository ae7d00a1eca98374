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

export interface ConfigProblem {
  /** The configuration key at fault, e.g. `admin.port`, `webhook.tls.certFile`, `dataDir`. */
  readonly field: string;
  /** What is wrong and what to do about it. */
  readonly message: string;
}

/**
 * A configuration that cannot run (exit code 3). Every problem found is listed together, so a site
 * fixes them in one go instead of one per restart.
 */
export class ConfigError extends Error {
  readonly problems: readonly ConfigProblem[];

  constructor(
    readonly field: string,
    message: string,
    more: readonly ConfigProblem[] = [],
  ) {
    const problems = [{ field, message }, ...more];
    super(
      problems.length === 1
        ? `invalid configuration: ${field}: ${message}`
        : `invalid configuration (${problems.length} problems):\n${problems.map((p) => `  - ${p.field}: ${p.message}`).join('\n')}`,
    );
    this.problems = problems;
    this.name = 'ConfigError';
  }

  static of(problems: readonly ConfigProblem[]): ConfigError {
    const [first, ...more] = problems;
    if (!first) throw new Error('ConfigError.of needs at least one problem');
    return new ConfigError(first.field, first.message, more);
  }
}

/** SQLite result codes that mean "could not store right now", as opposed to a bug in our SQL. */
const STORAGE_FAILURE_CODES = /^SQLITE_(FULL|IOERR|BUSY|LOCKED|CANTOPEN|READONLY|NOMEM|PROTOCOL|CORRUPT|NOTADB|AUTH)/;

/**
 * The agent's own file could not be written or flushed (a body file), whatever the error code says
 * (an injected or unusual errno included): the agent's failure, answered 503, never the sender's.
 */
export class StorageFailure extends Error {
  constructor(readonly failure: unknown) {
    super(`could not store: ${describeError(failure)}`);
    this.name = 'StorageFailure';
  }
}

export function isStorageFailure(err: unknown): boolean {
  if (err instanceof StorageFailure) return true;
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (STORAGE_FAILURE_CODES.test(code) || code === 'ENOSPC' || code === 'EIO' || code === 'EROFS')) return true;
  return false;
}

export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
