import fs from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import type { Handler } from './errors';
import { fileType } from './file-types';
import { splitTarget } from './target';

/**
 * Serves the files of one folder (the status window's build), as express.static did there with
 * `index: 'index.html', dotfiles: 'ignore', redirect: false` (its `send` package's path rules):
 *
 * - GET and HEAD only; any other method, and every path that names no file here, is passed on
 *   (`next()`), so the app's own 404 answers it. That includes a path that does not decode, holds a
 *   NUL, climbs out of the folder (`..`, also percent-encoded or with backslashes), names a dotfile or
 *   a dot-folder, a Windows device, stream or trimmed name (WINDOWS_SPECIAL), a folder (no listing,
 *   no redirect), or anything else that is not a regular file.
 * - A path ending in `/` serves that folder's index.html.
 * - The answer: the `headers` hook's headers (Cache-Control here), then Content-Type by extension and
 *   Content-Length, then the file (none for HEAD). No ETag, Last-Modified or ranges: the window's files
 *   are small and never cached (Cache-Control: no-store).
 * - A file that cannot be read for another reason than "not there" is an error (`next(err)`).
 */

/** A `..` segment, between slashes or backslashes, as `send` refuses it. */
const UP_PATH = /(?:^|[\\/])\.\.(?:[\\/]|$)/;

/**
 * A path segment Windows would not read as a plain file in the folder: a device name (`CON`, `NUL`,
 * `COM1`, `LPT1`, ..., with any extension, which Windows 10 opens as the device in every folder), a
 * stream or drive (`:`), or a name Windows trims (a trailing dot or space). Refused on every
 * platform: the window's build has no such name.
 */
const WINDOWS_SPECIAL = /^(?:con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])(?:\..*)?$|:|[. ]$/i;

/** The stat errors that mean "no such file". */
const NOT_THERE = new Set(['ENOENT', 'ENAMETOOLONG', 'ENOTDIR']);

function decode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/**
 * The file a request path names under `root`, or null when it names none that may be served. A
 * trailing slash names the folder's index.html.
 */
export function resolveUnder(root: string, urlPath: string): string | null {
  const decoded = decode(urlPath);
  if (decoded === null || decoded.includes('\0')) return null;
  const relative = decoded === '' ? '' : path.normalize(`.${path.sep}${decoded}`);
  if (UP_PATH.test(relative)) return null;
  // `.` is the folder itself (what normalising `/` leaves); any other name starting with a dot is a dotfile.
  const refused = (part: string): boolean => part !== '.' && (part.startsWith('.') || WINDOWS_SPECIAL.test(part));
  if (relative.split(path.sep).some(refused)) return null;
  const file = path.normalize(path.join(root, relative));
  return urlPath.endsWith('/') ? path.join(file, 'index.html') : file;
}

export function staticFiles(root: string, options: { readonly headers?: (res: ServerResponse) => void } = {}): Handler {
  const base = path.resolve(root);
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      next();
      return;
    }
    const file = resolveUnder(base, splitTarget(req.url ?? '').pathname);
    if (file === null) {
      next();
      return;
    }
    fs.stat(file, (err, stat) => {
      // Outside router's own try: whatever throws here goes to the error handler, not out of the process.
      try {
        if (err) {
          if (NOT_THERE.has(err.code ?? '')) next();
          else next(err);
          return;
        }
        // Only a regular file: a folder is never listed (nor redirected to with a slash), and a device,
        // pipe or socket is never opened.
        if (!stat.isFile() || file.endsWith(path.sep)) {
          next();
          return;
        }
        options.headers?.(res);
        if (!res.hasHeader('Content-Type')) res.setHeader('Content-Type', fileType(path.extname(file)));
        res.setHeader('Content-Length', stat.size);
        if (req.method === 'HEAD') {
          res.end();
          return;
        }
        const stream = fs.createReadStream(file);
        stream.once('error', (readErr) => {
          stream.destroy();
          next(readErr);
        });
        res.once('close', () => stream.destroy());
        stream.pipe(res);
      } catch (thrown) {
        next(thrown);
      }
    });
  };
}
