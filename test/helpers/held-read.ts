import type { ChildProcess } from 'node:child_process';

/**
 * The script of a reader that holds a read transaction on a SQLite file until its stdin ends: the
 * till between BEGIN and COMMIT. It requires better-sqlite3 from `process.env.SQLITE` and opens
 * `process.env.DB` read-only, reads `query` once, then prints `holding`.
 */
export function heldReadScript(query: string): string {
  return (
    `const D = require(process.env.SQLITE); const db = new D(process.env.DB, { readonly: true, fileMustExist: true });` +
    `db.exec('BEGIN'); db.prepare(${JSON.stringify(query)}).get(); console.log('holding');` +
    `process.stdin.resume(); process.stdin.on('end', () => { db.exec('COMMIT'); db.close(); process.exit(0); });`
  );
}

/**
 * Waits until `child` (running heldReadScript, stdin and stdout piped) holds its transaction, and
 * returns what ends it. What the child printed is in the error if it exits first.
 */
export async function heldRead(child: ChildProcess): Promise<{ release(): Promise<void> }> {
  let out = '';
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('holding')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the reader exited with ${code}: ${out}`)));
  });
  return {
    release: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.stdin!.end();
      }),
  };
}
