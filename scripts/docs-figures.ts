// `npm run docs:figures`: rewrites every figures block in README.md and docs/*.md from the latest bench
// results (bench/results/, rendered by bench/figures.ts). Prints which files changed.
import fs from 'node:fs';
import path from 'node:path';
import { docFiles, renderBlocks } from '../bench/figures';

for (const file of docFiles()) {
  const text = fs.readFileSync(file, 'utf8');
  const rendered = renderBlocks(text);
  if (rendered !== text) {
    fs.writeFileSync(file, rendered);
    console.log(`updated ${path.relative(process.cwd(), file)}`);
  }
}
