/**
 * Search text normalisation: case- and accent-insensitive, so "zoe" finds Zoë, "lukasz" finds Łukasz
 * and "osullivan" finds O'Sullivan. Pure; the same function builds the stored column and the query.
 */

/** Letters that do not decompose under NFD but that a manager types without the mark. */
const FOLDS: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
  ħ: 'h',
};

/** Lower-case, accents stripped, apostrophes and hyphens dropped, whitespace collapsed. */
export function normaliseForSearch(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[ßæœøłđðþıħ]/g, (c) => FOLDS[c] ?? c)
    .replace(/['’‘`´.-]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The query split into terms; every term must occur somewhere in a person's search text. */
export function searchTerms(query: string): string[] {
  const terms = normaliseForSearch(query)
    .split(' ')
    .filter((t) => t.length > 0);
  return [...new Set(terms)].slice(0, 8);
}

/** Escapes LIKE wildcards so a term containing % or _ matches literally (with ESCAPE '\\'). */
export function likeEscape(term: string): string {
  return term.replace(/[\\%_]/g, (c) => `\\${c}`);
}
