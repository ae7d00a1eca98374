/**
 * The CLI's two output streams, safe to write after the reader went away. `status | head` closes the
 * pipe after ten lines; Node then reports EPIPE as an 'error' event, which unhandled ends the process
 * with a stack trace (and could cut short a command that has work left after printing). Instead the
 * stream is marked closed, later writes are dropped, and the command ends with its own exit code.
 */

const closed = new WeakSet<NodeJS.WritableStream>();
let guarded = false;

/** Installs the handlers once per process (main() calls it before running a command). */
export function guardOutputStreams(): void {
  if (guarded) return;
  guarded = true;
  for (const stream of [process.stdout, process.stderr]) {
    // Any error on an output stream (EPIPE, EBADF, a destroyed stream) means nobody reads it any more;
    // there is nowhere left to report it, so the stream is only marked closed.
    stream.on('error', () => closed.add(stream));
  }
}

export function writeOut(text: string): void {
  if (!closed.has(process.stdout) && !process.stdout.destroyed) process.stdout.write(text);
}

export function writeErr(text: string): void {
  if (!closed.has(process.stderr) && !process.stderr.destroyed) process.stderr.write(text);
}
