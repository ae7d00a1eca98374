/**
 * Pretty-prints JSON text without reading its values: the text is re-indented token by token, so
 * every number and string stays exactly as it was written (a price written with two decimals keeps
 * them, an integer too long for a double keeps every digit, an exponent keeps its form). Reading the
 * text with JSON.parse and writing it back would turn each number into a double and print that.
 *
 * The layout is that of JSON.stringify(value, null, 2): two spaces per level, one member or element a
 * line, "key": value, and empty objects and arrays as {} and []. Duplicate keys are all kept, in order.
 * Pure and free of Node imports: the renderer bundles this file (payload View, conflict comparison)
 * and the CLI uses it too.
 */

const INDENT = '  ';

/**
 * The text re-indented, or null when it is not JSON (by JSON.parse's rules: a body that parses is
 * printed, one that does not is left for the caller to show as it is).
 */
export function prettyJson(text: string): string | null {
  try {
    JSON.parse(text);
  } catch {
    return null;
  }
  return reindent(text);
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** Re-indents text that JSON.parse accepted; every token other than whitespace is copied as written. */
function reindent(text: string): string {
  const out: string[] = [];
  const indents: string[] = [''];
  const indent = (depth: number): string => {
    while (indents.length <= depth) indents.push(indents[indents.length - 1]! + INDENT);
    return indents[depth]!;
  };
  let depth = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const close = c === 0x7b ? 0x7d : 0x5d;
      let j = i + 1;
      while (j < n && isSpace(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) === close) {
        out.push(c === 0x7b ? '{}' : '[]');
        i = j + 1;
        continue;
      }
      depth++;
      out.push(text[i]!, '\n', indent(depth));
      i++;
      continue;
    }
    if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
      out.push('\n', indent(depth), text[i]!);
      i++;
      continue;
    }
    if (c === 0x2c /* , */) {
      out.push(',\n', indent(depth));
      i++;
      continue;
    }
    if (c === 0x3a /* : */) {
      out.push(': ');
      i++;
      continue;
    }
    if (c === 0x22 /* " */) {
      let j = i + 1;
      for (;;) {
        const d = text.charCodeAt(j);
        if (d === 0x5c /* \ */) j += 2;
        else if (d === 0x22) break;
        else j++;
      }
      out.push(text.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    // A number or a literal (true, false, null): up to the next punctuation or whitespace.
    let j = i + 1;
    while (j < n) {
      const d = text.charCodeAt(j);
      if (isSpace(d) || d === 0x2c || d === 0x5d || d === 0x7d || d === 0x3a) break;
      j++;
    }
    out.push(text.slice(i, j));
    i = j;
  }
  return out.join('');
}
