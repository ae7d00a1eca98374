import vm from 'node:vm';

/**
 * JSON.parse as the reference the project's parsers are tested against, safe from a V8 bug. Node
 * 24's V8 (13.6) can name a member wrongly when a name with an escape follows the names of an
 * earlier document: after `JSON.parse('{"ab":1,"a\\\\":1}')`, `JSON.parse('{"ab":1,"a\\"":2}')` names
 * its second member `a\` instead of `a"` (found by a differential fuzz of parseExact; Node 20 reads
 * it right, and so does a document parsed on its own). A text with a backslash is therefore parsed
 * in a new V8 context, which has none of the earlier documents' object layouts, and its value copied
 * into this one (structuredClone: deepStrictEqual then compares like with like); a SyntaxError is
 * given back as this context's. A text without a backslash has no escape to misread.
 */
export function referenceJsonParse(text: string): unknown {
  if (!text.includes('\\')) return JSON.parse(text) as unknown;
  let value: unknown;
  try {
    value = vm.runInNewContext('JSON.parse(text)', { text }) as unknown;
  } catch (err) {
    throw new SyntaxError((err as Error).message);
  }
  return structuredClone(value);
}
