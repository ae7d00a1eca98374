#!/usr/bin/env node
// Draws the app and tray icons (no image tools needed) and writes the PNG/ICO files in this folder.
// The outputs are committed; run `node assets/make-icons.mjs` again only to change the design.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));

function png(width, height, rgba) {
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(td) >>> 0);
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0;
    rgba.copy(raw, y * (width * 4 + 1) + 1, y * width * 4, (y + 1) * width * 4);
  }
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

function ico(images) {
  const header = Buffer.alloc(6);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(images.length, 4);
  const entries = [];
  let offset = 6 + 16 * images.length;
  for (const { size, data } of images) {
    const e = Buffer.alloc(16);
    e[0] = size >= 256 ? 0 : size;
    e[1] = size >= 256 ? 0 : size;
    e.writeUInt16LE(1, 4); // planes
    e.writeUInt16LE(32, 6); // bits per pixel
    e.writeUInt32LE(data.length, 8);
    e.writeUInt32LE(offset, 12);
    offset += data.length;
    entries.push(e);
  }
  return Buffer.concat([header, ...entries, ...images.map((i) => i.data)]);
}

const hex = (h) => [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)];

// Signed distances in a unit square (0..1); negative inside.
const roundRect = (x, y, cx, cy, hw, hh, r) => {
  const qx = Math.abs(x - cx) - hw + r;
  const qy = Math.abs(y - cy) - hh + r;
  return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
};
const circle = (x, y, cx, cy, r) => Math.hypot(x - cx, y - cy) - r;
const segment = (x, y, ax, ay, bx, by, w) => {
  const px = x - ax, py = y - ay, dx = bx - ax, dy = by - ay;
  const t = Math.max(0, Math.min(1, (px * dx + py * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - t * dx, py - t * dy) - w;
};

/** Renders layers (painted in order) with 4x4 supersampling. */
function render(size, layers) {
  const out = Buffer.alloc(size * size * 4);
  const n = 4;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let r = 0, g = 0, b = 0, a = 0;
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const x = (px + (sx + 0.5) / n) / size;
          const y = (py + (sy + 0.5) / n) / size;
          let cr = 0, cg = 0, cb = 0, ca = 0;
          for (const { sdf, colour } of layers) {
            if (sdf(x, y) <= 0) [cr, cg, cb, ca] = [...hex(colour), 1];
          }
          r += cr * ca; g += cg * ca; b += cb * ca; a += ca;
        }
      }
      const i = (py * size + px) * 4;
      const samples = n * n;
      out[i] = a ? Math.round(r / a) : 0;
      out[i + 1] = a ? Math.round(g / a) : 0;
      out[i + 2] = a ? Math.round(b / a) : 0;
      out[i + 3] = Math.round((a / samples) * 255);
    }
  }
  return png(size, size, out);
}

// App icon: a navy tile, a white till receipt with lines, a green badge with a check mark.
const appLayers = [
  { sdf: (x, y) => roundRect(x, y, 0.5, 0.5, 0.47, 0.47, 0.12), colour: '#0f2a47' },
  { sdf: (x, y) => roundRect(x, y, 0.43, 0.46, 0.22, 0.3, 0.04), colour: '#ffffff' },
  ...[0.3, 0.4, 0.5, 0.6].map((ly, i) => ({ sdf: (x, y) => roundRect(x, y, 0.43 - (i === 3 ? 0.05 : 0), ly, i === 3 ? 0.1 : 0.15, 0.018, 0.015), colour: '#1f5faa' })),
  { sdf: (x, y) => circle(x, y, 0.7, 0.72, 0.2), colour: '#0f2a47' },
  { sdf: (x, y) => circle(x, y, 0.7, 0.72, 0.165), colour: '#2fa84f' },
  { sdf: (x, y) => Math.min(segment(x, y, 0.62, 0.725, 0.68, 0.785, 0.022), segment(x, y, 0.68, 0.785, 0.785, 0.655, 0.022)), colour: '#ffffff' },
];

const TRAY = { green: '#2fa84f', amber: '#f0a500', red: '#e03131', grey: '#8a8f98' };
const trayLayers = (colour) => [
  { sdf: (x, y) => circle(x, y, 0.5, 0.5, 0.47), colour: '#1a1a1a' },
  { sdf: (x, y) => circle(x, y, 0.5, 0.5, 0.41), colour: '#ffffff' },
  { sdf: (x, y) => circle(x, y, 0.5, 0.5, 0.33), colour },
];

const written = [];
const write = (name, data) => {
  fs.writeFileSync(path.join(here, name), data);
  written.push(`${name} (${data.length} B)`);
};
write('icon.png', render(512, appLayers));
write('icon.ico', ico([16, 24, 32, 48, 64, 128, 256].map((size) => ({ size, data: render(size, appLayers) }))));
for (const [name, colour] of Object.entries(TRAY)) {
  write(`tray-${name}.png`, render(16, trayLayers(colour)));
  write(`tray-${name}@2x.png`, render(32, trayLayers(colour)));
}
console.log(`wrote ${written.join(', ')}`);
