/**
 * Commands the window shows ("From the command line: ...") as they work when pasted on this PC: with
 * the `--config` the agent was started with when a plain command would find another site. The agent
 * sends it with each status (`cliConfigArgument`, from src/config/invocation.ts); it is kept there,
 * so the severity model's lines (src/domain/severity.ts) name commands the same way.
 */
import { cliCommand as invocationCommand, setInvocationConfigArgument } from '../../src/config/invocation';

export function setCliConfigArgument(argument: string | undefined): void {
  setInvocationConfigArgument(typeof argument === 'string' ? argument : '');
}

export function cliCommand(words: string): string {
  return invocationCommand(words);
}
