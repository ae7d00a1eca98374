/**
 * How a person reaches this agent from the command line: the commands it prints as hints (in the
 * CLI's output, the window, the publisher) carry the `--config` this process was started with when a
 * command typed without it would find another site (config/site.ts). Set once at start-up by the
 * entry point (CLI main, desktop app, agent process); empty until then.
 */
let configArg = '';

export function setInvocationConfigArgument(argument: string): void {
  configArg = argument;
}

export function invocationConfigArgument(): string {
  return configArg;
}

/** `pos-sync-agent WORDS` as it works when pasted into a shell on this PC. */
export function cliCommand(words: string): string {
  return `pos-sync-agent ${words}${configArg}`;
}
