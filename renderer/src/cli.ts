/**
 * Commands the window shows ("From the command line: ...") as they work when pasted on this PC: with
 * the `--config` the agent was started with when a plain command would find another site. The agent
 * sends it with each status (`cliConfigArgument`, from src/config/invocation.ts).
 */
let configArg = '';

export function setCliConfigArgument(argument: string | undefined): void {
  configArg = typeof argument === 'string' ? argument : '';
}

export function cliCommand(words: string): string {
  return `pos-sync-agent ${words}${configArg}`;
}
