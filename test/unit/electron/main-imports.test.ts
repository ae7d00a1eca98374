import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

/**
 * The desktop shell's main process must never open SQLite: a long synchronous call there freezes the
 * tray and the window (issue 11). This walks the runtime import graph from src/electron/main.ts (type-only
 * imports are erased by the compiler and do not load anything) and fails if better-sqlite3 or anything
 * under src/store can be loaded from it.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');

function runtimeSpecifiers(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) out.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) out.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteralLike(node.arguments[0]!)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) out.push((node.arguments[0] as ts.StringLiteralLike).text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function resolveLocal(from: string, specifier: string): string {
  const base = path.resolve(path.dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  throw new Error(`cannot resolve ${specifier} from ${path.relative(ROOT, from)}`);
}

/** Every source file and package reachable at run time from `entry`, with one path to each. */
function reachable(entry: string): { files: Map<string, string[]>; packages: Map<string, string[]> } {
  const files = new Map<string, string[]>([[entry, [entry]]]);
  const packages = new Map<string, string[]>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.shift()!;
    const via = files.get(file)!;
    for (const specifier of runtimeSpecifiers(file)) {
      if (specifier.startsWith('.')) {
        const target = resolveLocal(file, specifier);
        if (!files.has(target)) {
          files.set(target, [...via, target]);
          queue.push(target);
        }
      } else {
        const name = specifier.startsWith('node:') ? specifier : specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
        if (!packages.has(name)) packages.set(name, [...via, specifier]);
      }
    }
  }
  return { files, packages };
}

const rel = (chain: string[]): string => chain.map((f) => (path.isAbsolute(f) ? path.relative(ROOT, f) : f)).join(' -> ');

function forbiddenFrom(entry: string): string[] {
  const { files, packages } = reachable(path.join(ROOT, entry));
  const problems: string[] = [];
  const sqlite = packages.get('better-sqlite3');
  if (sqlite) problems.push(rel(sqlite));
  for (const [file, chain] of files) if (path.relative(ROOT, file).startsWith(`src${path.sep}store${path.sep}`)) problems.push(rel(chain));
  return problems;
}

describe('the desktop main process never loads SQLite', () => {
  it('neither better-sqlite3 nor src/store is reachable from src/electron/main.ts', () => {
    assert.deepEqual(forbiddenFrom('src/electron/main.ts'), []);
  });

  it('the check finds SQLite where it is: the agent process and the agent itself reach it', () => {
    // Without this the first test could pass because the walk is broken.
    const fromChild = forbiddenFrom('src/electron/agent-process.ts');
    assert.ok(fromChild.some((p) => p.endsWith('better-sqlite3')), fromChild.join('\n'));
    assert.ok(forbiddenFrom('src/agent.ts').some((p) => p.includes('src/store/')));
  });

  it('main loads electron and no module of the agent core', () => {
    const { files, packages } = reachable(path.join(ROOT, 'src/electron/main.ts'));
    assert.ok(packages.has('electron'));
    for (const banned of ['src/agent.ts', 'src/core.ts', 'src/cli/services.ts', 'src/admin/service.ts']) {
      assert.equal(files.has(path.join(ROOT, banned)), false, `${banned} is reachable from main`);
    }
  });
});
