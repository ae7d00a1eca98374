import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

/** Every link between the repository's documents leads somewhere: the file exists, and so does the heading. */

const ROOT = path.resolve(__dirname, '..', '..');
const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const text = fs.readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

describe('links between the documents', () => {
  it('lead to files and headings that exist, and name no file outside the repository', () => {
    const broken: string[] = [];
    for (const doc of DOCS) {
      const text = fs.readFileSync(path.join(ROOT, doc), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/i.test(target)) continue;
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const resolved = file === '' ? path.join(ROOT, doc) : path.resolve(path.dirname(path.join(ROOT, doc)), file);
        if (!resolved.startsWith(ROOT + path.sep)) broken.push(`${doc}: ${target} is outside the repository`);
        else if (!fs.existsSync(resolved)) broken.push(`${doc}: ${target} does not exist`);
        else if (anchor && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) broken.push(`${doc}: ${target} has no heading #${anchor}`);
      }
      for (const m of text.matchAll(/`(\.\.\/[^`]+\.md)`/g)) broken.push(`${doc}: names ${m[1]}, outside the repository`);
    }
    assert.deepEqual(broken, []);
  });

  it('finds a broken anchor (the check can fail)', () => {
    assert.equal(anchors(path.join(ROOT, 'docs', 'pos-database.md')).has('no-such-heading'), false);
    assert.equal(slug("Reading the till's file: which SQLite the bench's till uses (2026-11-25)"), 'reading-the-tills-file-which-sqlite-the-benchs-till-uses-2026-11-25');
  });
});
