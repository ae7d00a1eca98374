import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';

/**
 * Keeps src/'s imports flowing downward with no circle. Every file under src/ belongs to a layer by
 * its folder (or, for a file directly in src/, by its name); a file may import from its own layer and
 * the layers below, never from one above, and no chain of imports may lead back to where it started.
 * Type-only imports count: they are dependencies of the design as much as of the code.
 *
 * The layers, lowest first:
 *   0  foundations: domain (pure rules and wording), config, http helpers, threads, files (writing a
 *      file where another account may write), errors, log, clock, version, crash-points (the
 *      test-only crash hook);
 *   1  the files: store (agent.db, staff.db, opening all three) and till (pos-sync.db, the contract);
 *   2  what moves data: sync (the applier), webhook (the receiver), employees (the staff interface);
 *   3  the running agent: core.ts (the three files and their queries) and agent.ts (the threads and
 *      services composed);
 *   4  admin: the status window's server. It knows no operations service: they plug into it through
 *      admin/extensions.ts;
 *   5  ops: the operations services (backups, tunnel, disk, clock, retention, secrets, start-up);
 *   6  cli (the commands) and dev (the fake head office and employee service, the child agent);
 *   7  electron: the desktop shell.
 * A new top-level folder or file in src/ must be given a layer here before its imports are allowed.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['domain', 'config', 'http', 'threads', 'files', 'errors.ts', 'log.ts', 'log-rotation.ts', 'clock.ts', 'version.ts', 'crash-points.ts'],
  ['store', 'till'],
  ['sync', 'webhook', 'employees'],
  ['core.ts', 'agent.ts'],
  ['admin'],
  ['ops'],
  ['cli', 'dev'],
  ['electron'],
];

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SRC = path.join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** Relative module specifiers of static imports, re-exports, dynamic imports and requires. */
export function importSpecifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [/\b(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const pattern of patterns) for (const m of source.matchAll(pattern)) if (m[1]!.startsWith('.')) found.push(m[1]!);
  return found;
}

function resolveImport(from: string, specifier: string): string | null {
  const base = path.resolve(path.dirname(from), specifier).replace(/\.js$/, '');
  for (const candidate of [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts'), base]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return null;
}

function layerOf(file: string): number {
  const top = path.relative(SRC, file).split(path.sep)[0]!;
  return LAYERS.findIndex((names) => names.includes(top));
}

const rel = (file: string): string => path.relative(ROOT, file).split(path.sep).join('/');

function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const targets: string[] = [];
    for (const specifier of importSpecifiers(fs.readFileSync(file, 'utf8'))) {
      const target = resolveImport(file, specifier);
      assert.ok(target !== null, `${rel(file)} imports ${specifier}, which does not resolve to a file`);
      if (target.startsWith(SRC + path.sep)) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
export function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('src/ imports', () => {
  const graph = importGraph();

  it('reads a real graph (the walk finds the files and their imports)', () => {
    assert.ok(graph.size > 100, `only ${graph.size} files found under src/`);
    assert.ok(graph.get(path.join(SRC, 'agent.ts'))?.includes(path.join(SRC, 'core.ts')), 'agent.ts -> core.ts is seen');
  });

  it('places every top-level folder and file of src/ in a layer', () => {
    const unplaced = [...new Set([...graph.keys()].filter((f) => layerOf(f) < 0).map((f) => path.relative(SRC, f).split(path.sep)[0]!))];
    assert.deepEqual(unplaced, [], `give these a layer in LAYERS: ${unplaced.join(', ')}`);
  });

  it('has no import from a lower layer to a higher one', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) if (layerOf(target) > layerOf(file)) upward.push(`${rel(file)} (layer ${layerOf(file)}) -> ${rel(target)} (layer ${layerOf(target)})`);
    }
    assert.deepEqual(upward, []);
  });

  it('has no import circle', () => {
    assert.deepEqual(circles(graph).map((c) => c.map(rel)), []);
  });

  it('finds a circle and an upward import when there is one (the checks can fail)', () => {
    const a = path.join(SRC, 'store', 'a.ts');
    const b = path.join(SRC, 'store', 'b.ts');
    const c = path.join(SRC, 'store', 'c.ts');
    assert.deepEqual(circles(new Map([[a, [b]], [b, [c]], [c, [a]]])), [[a, b, c]]);
    assert.deepEqual(circles(new Map([[a, [b]], [b, [c]], [c, []]])), []);
    assert.ok(layerOf(path.join(SRC, 'ops', 'x.ts')) > layerOf(path.join(SRC, 'admin', 'x.ts')));
    assert.deepEqual(importSpecifiers(`import type { A } from './a';\nimport {\n  B,\n} from '../b';\nexport { C } from './c';\nconst d = await import('./d');\nimport 'node:fs';`), ['./a', '../b', './c', './d']);
  });
});
