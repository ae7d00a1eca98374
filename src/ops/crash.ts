import type { Logger } from '../log';

/**
 * An uncaught exception or unhandled rejection leaves the process in a state nobody reasoned about,
 * while it holds the only writer of the till's database. So: log what failed, then exit non-zero and
 * let the service manager (systemd `Restart=on-failure`, the Windows scheduled task's restart, or
 * the desktop app relaunching itself) start a clean process. SQLite's WAL with synchronous=FULL makes
 * a sudden exit safe: what was committed stays, what was not is rolled back on the next open, and
 * the OS drops the data-folder lock with the process.
 */

/** The exit code after a crash (EX_SOFTWARE: an internal software error). */
export const CRASH_EXIT_CODE = 70;

/**
 * What the log gets: the error's kind, its stable id or system code, and where in the code it was
 * thrown. Not its message: messages can carry what the failing code was handling (a staff member's
 * name or e-mail, a payload's text), and the log goes to support in the diagnostics zip.
 */
export function describeCrash(kind: 'uncaught exception' | 'unhandled rejection', err: unknown): string {
  if (!(err instanceof Error)) return `${kind}: a non-Error value was thrown (${typeof err}); message withheld`;
  const id = (err as { id?: unknown }).id;
  const code = (err as { code?: unknown }).code;
  const tags = [typeof id === 'string' ? `id ${id}` : null, typeof code === 'string' || typeof code === 'number' ? `code ${code}` : null].filter((t) => t !== null);
  const frames = (err.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .slice(0, 12)
    .map((line) => line.trim());
  return [`${kind}: ${err.name}${tags.length > 0 ? ` (${tags.join(', ')})` : ''}; message withheld (it may hold personal data)`, ...frames.map((f) => `  ${f}`)].join('\n');
}

export interface CrashHandlerOptions {
  readonly log: Logger;
  /** Ends the process (headless: process.exit; the desktop app relaunches itself first). */
  readonly exit: (code: number) => void;
  /** Best-effort synchronous clean-up before exiting (the pid file). Must not throw. */
  readonly beforeExit?: () => void;
}

let installed: { uncaught: (err: unknown) => void; rejection: (err: unknown) => void } | null = null;

/** Installs the process-wide handlers (once; a second call replaces the first). */
export function installCrashHandlers(options: CrashHandlerOptions): void {
  uninstallCrashHandlers();
  let handling = false;
  const fatal = (kind: 'uncaught exception' | 'unhandled rejection', err: unknown): void => {
    // A second failure while handling the first: just go.
    if (handling) options.exit(CRASH_EXIT_CODE);
    handling = true;
    try {
      options.log.error(`${describeCrash(kind, err)}\nexiting (code ${CRASH_EXIT_CODE}) so the service manager restarts a clean process`);
    } catch {
      // Logging failed (disk full?): exit anyway.
    }
    try {
      options.beforeExit?.();
    } catch {
      // Best effort.
    }
    options.exit(CRASH_EXIT_CODE);
  };
  installed = { uncaught: (err) => fatal('uncaught exception', err), rejection: (err) => fatal('unhandled rejection', err) };
  process.on('uncaughtException', installed.uncaught);
  process.on('unhandledRejection', installed.rejection);
}

export function uninstallCrashHandlers(): void {
  if (!installed) return;
  process.off('uncaughtException', installed.uncaught);
  process.off('unhandledRejection', installed.rejection);
  installed = null;
}

/** The environment variable of the test-only fault below. */
export const TEST_FAULT_ENV = 'POS_SYNC_TEST_FAULT';

/**
 * Test-only: with NODE_ENV=test and POS_SYNC_TEST_FAULT set, throws (or rejects) once the agent has
 * started, so a test can watch a real process crash. The message carries made-up personal data that
 * the log must not show. Neither variable is a configuration key (config comes from the file and
 * POS_SYNC__* variables), and the systemd unit sets NODE_ENV=production, so a site cannot reach it.
 */
export function armTestFault(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NODE_ENV !== 'test') return false;
  const fault = env[TEST_FAULT_ENV];
  const message = 'test fault while handling staff member Jane Example <jane.example@example.com>, NI QQ123456C';
  if (fault === 'uncaught-exception') {
    setTimeout(() => {
      throw new TypeError(message);
    }, 50);
    return true;
  }
  if (fault === 'unhandled-rejection') {
    setTimeout(() => void Promise.reject(new RangeError(message)), 50);
    return true;
  }
  return false;
}
