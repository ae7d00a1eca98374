/**
 * The Content-Type of a served file by its extension (any case), as the `mime-types` package that
 * express.static used names them, for the files a web page is built from. The status window's build
 * (scripts/build-renderer.mjs) makes .html, .js, .css and .map files; the rest are here so an icon,
 * an image or a font added to it is served as what it is. Anything else is application/octet-stream.
 */
const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/vnd.microsoft.icon',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
};

export const DEFAULT_FILE_TYPE = 'application/octet-stream';

/** The type for an extension as path.extname gives it (`.js`); the default for an unknown or missing one. */
export function fileType(extension: string): string {
  return Object.hasOwn(TYPES, extension.toLowerCase()) ? TYPES[extension.toLowerCase()]! : DEFAULT_FILE_TYPE;
}
