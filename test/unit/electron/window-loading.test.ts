import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

/**
 * Electron cannot run here, so this reads main.ts and harden.ts: the window loads only through
 * loadWindow (which clears its session first, and takes its origin from the link it loads), never a
 * configured address, and has its own in-memory session rather than the persistent default one.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
const source = (file: string): ts.SourceFile => ts.createSourceFile(file, fs.readFileSync(path.join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2022, true);

function enclosingFunction(node: ts.Node): string | null {
  for (let n: ts.Node | undefined = node.parent; n; n = n.parent) if (ts.isFunctionDeclaration(n)) return n.name?.text ?? null;
  return null;
}

function calls(file: ts.SourceFile, method: string): ts.CallExpression[] {
  const out: ts.CallExpression[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === method) out.push(node);
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

describe('the desktop window loads only through loadWindow', () => {
  const main = source('src/electron/main.ts');

  it('every loadURL (and no loadFile) is in loadWindow, after the session is cleared', () => {
    const loads = calls(main, 'loadURL');
    assert.ok(loads.length > 0);
    for (const call of loads) assert.equal(enclosingFunction(call), 'loadWindow', call.getText());
    assert.deepEqual(calls(main, 'loadFile'), []);
    const loadWindow = main.statements.find((s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === 'loadWindow');
    const body = loadWindow?.body?.getText() ?? '';
    const cleared = body.indexOf('clearWindowSession(');
    assert.ok(cleared >= 0, 'clears the session');
    // loadURL is called by its helper `load` only, and `load` only once the clearing has settled.
    assert.equal(body.match(/\.loadURL\(/g)?.length, 1);
    assert.match(body, /const load = \(url: string, what: string\): void => \{\s*target\.loadURL\(url\)/);
    const loadCalls = [...body.matchAll(/\bload\(/g)].map((m) => m.index);
    assert.ok(loadCalls.length >= 2 && loadCalls.every((i) => i > cleared), 'every load comes after the session is cleared');
    assert.ok(body.indexOf('windowOrigin = page.origin') > body.indexOf('clearWindowSession('), 'the origin is the link\'s, set once the session is cleared');
  });

  it('never loads the configured address of the window (the client\'s adminUrl)', () => {
    assert.doesNotMatch(main.getText(), /\.adminUrl\b/);
  });

  it('the window has its own session, not the persistent default one', () => {
    const text = main.getText();
    assert.match(text, /session: windowSession\(/);
    assert.doesNotMatch(text, /defaultSession|partition:\s*['"]persist:/);
    const harden = source('src/electron/harden.ts').getText();
    assert.match(harden, /session\.fromPartition\(WINDOW_PARTITION, \{ cache: false \}\)/);
    assert.match(harden, /webRequest\.onBeforeSendHeaders\(/);
    assert.match(harden, /webRequest\.onHeadersReceived\(/);
    assert.match(harden, /clearStorageData\(\{ storages: \[\.\.\.CLEARED_STORAGES\] \}\)/);
    assert.match(harden, /clearCache\(\)/);
  });
});
