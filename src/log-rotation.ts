import fs from 'node:fs';
import path from 'node:path';

/** What the rotation needs of electron-log's file (its `crop` is not in the typings). */
export interface RotatedLog {
  readonly path: string;
  clear(): boolean;
  crop?(bytesAfter: number): void;
}

export type RotationFs = Pick<typeof fs, 'renameSync' | 'unlinkSync' | 'copyFileSync' | 'truncateSync'>;

/** The rotated log's name: agent.log → agent.old.log (one kept; the log takes at most about twice log.maxFileBytes). */
export function oldLogPath(file: string): string {
  const parsed = path.parse(file);
  return path.join(parsed.dir, `${parsed.name}.old${parsed.ext}`);
}

/**
 * Moves a full log aside as NAME.old.EXT, replacing the previous one. On Windows a file that another
 * program holds open without sharing delete cannot be renamed, and a log viewer following the file
 * often holds it so (most Windows programs share reading and writing, not deleting). The log is then
 * copied aside and emptied in place, which such a program allows, so no line is lost. (A line that
 * another process, a command run at that instant, appends between the copy and the emptying is lost;
 * the agent's own threads hand their lines to this one.) Only when that fails too, the old file being
 * held as well, is the log cut to its last quarter, electron-log's own fallback. The copy never
 * writes through a link planted as the old file: that name is removed first and the copy must create it.
 */
export function archiveLog(file: RotatedLog, maxBytes: number, io: RotationFs = fs): 'renamed' | 'copied' | 'cropped' {
  const old = oldLogPath(file.path);
  try {
    io.renameSync(file.path, old);
    return 'renamed';
  } catch {
    // Held open (EBUSY/EPERM on Windows): copy and empty instead.
  }
  try {
    try {
      io.unlinkSync(old);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    io.copyFileSync(file.path, old, fs.constants.COPYFILE_EXCL);
    io.truncateSync(file.path, 0);
    return 'copied';
  } catch (err) {
    process.stderr.write(`could not rotate the log ${file.path} (${(err as Error).message}): keeping its last quarter\n`);
    if (file.crop) file.crop(Math.min(Math.round(maxBytes / 4), 256 * 1024));
    else file.clear();
    return 'cropped';
  }
}
