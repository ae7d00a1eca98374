#!/usr/bin/env node
// The Windows service wrapper for the desktop installer (electron-builder.yml, win.extraResources):
// WinSW 2.12.0's WinSW.NET461.exe (MIT; .NET Framework 4.6.1, part of Windows 10 and 11), saved as
// build/winsw/pos-sync-agent-service.exe (WinSW reads the .xml of the same name beside it). Run by
// `npm run dist` on the machine that builds the installer (it downloads Electron too). The file is
// checked against the SHA-256 and size below before it is used; WinSW publishes no checksums of its
// own, and these match the ones other projects pin for the same release.
//
//   node scripts/fetch-winsw.mjs              download (once) and check
//   node scripts/fetch-winsw.mjs --from FILE  check and use a copy fetched by other means
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const WINSW = {
  version: '2.12.0',
  url: 'https://github.com/winsw/winsw/releases/download/v2.12.0/WinSW.NET461.exe',
  sha256: 'b5066b7bbdfba1293e5d15cda3caaea88fbeab35bd5b38c41c913d492aadfc4f',
  bytes: 655872,
};

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TARGET = path.join(ROOT, 'build', 'winsw', 'pos-sync-agent-service.exe');

/** Why these bytes are not the pinned release, or null when they are. */
export function problemWith(bytes) {
  if (bytes.length !== WINSW.bytes) return `${bytes.length} bytes, expected ${WINSW.bytes}`;
  const sha = crypto.createHash('sha256').update(bytes).digest('hex');
  return sha === WINSW.sha256 ? null : `SHA-256 ${sha}, expected ${WINSW.sha256}`;
}

async function main(argv) {
  const from = argv.indexOf('--from');
  let bytes;
  if (from >= 0) bytes = fs.readFileSync(argv[from + 1]);
  else if (fs.existsSync(TARGET) && problemWith(fs.readFileSync(TARGET)) === null) {
    console.log(`WinSW ${WINSW.version}: ${TARGET} (checked)`);
    return 0;
  } else {
    const res = await fetch(WINSW.url, { redirect: 'follow' });
    if (!res.ok) throw new Error(`${WINSW.url}: HTTP ${res.status}`);
    bytes = Buffer.from(await res.arrayBuffer());
  }
  const problem = problemWith(bytes);
  if (problem) {
    console.error(`WinSW ${WINSW.version} refused: ${problem}. Nothing was written.`);
    return 1;
  }
  fs.mkdirSync(path.dirname(TARGET), { recursive: true });
  fs.writeFileSync(TARGET, bytes);
  console.log(`WinSW ${WINSW.version}: ${TARGET} (checked)`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      console.error(`WinSW ${WINSW.version}: ${err.message}`);
      process.exit(1);
    },
  );
}
