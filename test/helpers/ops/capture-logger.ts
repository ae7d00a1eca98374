import { inspect } from 'node:util';
import { redactor, type Logger } from '../../../src/log';

/** A logger that keeps its lines (redacted, as the real one writes them) for assertions. */
export function captureLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const push =
    (level: string) =>
    (...args: unknown[]): void => {
      lines.push(`[${level}] ${redactor.redact(args.map((a) => (typeof a === 'string' ? a : inspect(a))).join(' '))}`);
    };
  return { lines, error: push('error'), warn: push('warn'), info: push('info'), verbose: push('verbose'), debug: push('debug') };
}
