import fs from 'node:fs';

/**
 * The restore's swap (restore.ts): a list of steps, each one rename (or a folder made or removed) that
 * can be undone. Run in order; when one fails, the ones done are undone, newest first, so the data
 * folder is as it was. Windows refuses to rename or remove a file another program has open (SQLite
 * and most programs open without FILE_SHARE_DELETE), so any step may fail there.
 */

export interface SwapStep {
  /** The file or folder this step renames or removes, named to the operator when it fails. */
  readonly path: string;
  run(): void;
  undo(): void;
}

/** `from` renamed to `to` (replacing a file `to` left by an earlier, interrupted run). */
export function renameStep(from: string, to: string): SwapStep {
  return { path: from, run: () => fs.renameSync(from, to), undo: () => fs.renameSync(to, from) };
}

/** An owner-only folder made, unless it is there already (then nothing to undo). */
export function makeFolderStep(dir: string): SwapStep {
  let made = false;
  return {
    path: dir,
    run: () => {
      made = fs.mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined;
    },
    undo: () => {
      if (made) fs.rmdirSync(dir);
    },
  };
}

/** An empty folder removed (its files were moved out by the steps before). */
export function removeEmptyFolderStep(dir: string): SwapStep {
  return { path: dir, run: () => fs.rmdirSync(dir), undo: () => fs.mkdirSync(dir, { mode: 0o700 }) };
}

/** A step failed, and every step done before it was undone: nothing changed. */
export class SwapRefused extends Error {
  constructor(
    readonly path: string,
    readonly failure: NodeJS.ErrnoException,
  ) {
    super(`could not move ${path}: ${failure.message}`);
  }
}

/** A step failed and undoing the ones before failed too: the folder is half swapped. */
export class SwapStuck extends Error {
  constructor(
    readonly path: string,
    readonly failure: NodeJS.ErrnoException,
    readonly undoPath: string,
    readonly undoFailure: NodeJS.ErrnoException,
  ) {
    super(`could not move ${path} (${failure.message}), nor put ${undoPath} back (${undoFailure.message})`);
  }
}

/** Runs every step, or (one failing) none: throws SwapRefused after undoing, SwapStuck when undoing failed too. */
export function runAllOrNothing(steps: readonly SwapStep[]): void {
  const done: SwapStep[] = [];
  for (const step of steps) {
    try {
      step.run();
      done.push(step);
    } catch (err) {
      for (const back of done.reverse()) {
        try {
          back.undo();
        } catch (undoErr) {
          throw new SwapStuck(step.path, err as NodeJS.ErrnoException, back.path, undoErr as NodeJS.ErrnoException);
        }
      }
      throw new SwapRefused((err as NodeJS.ErrnoException).path ?? step.path, err as NodeJS.ErrnoException);
    }
  }
}
