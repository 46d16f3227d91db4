// How SQLite's token index (sqlite/tokens.ts) cuts text, in JavaScript: the same cuts as FTS5's
// tokenizer makes, for the vocabulary its triggers keep. Apart, as connection.ts registers them.
import { searchFold } from './fold';

/**
 * Where text is cut: ASCII control characters, space, comma and DEL, FTS5's `ascii` separators
 * once every other ASCII mark is a token character (TOKEN_CHARS). Search terms never hold one
 * unless they hold a control character (those go to the trigram index).
 */
// eslint-disable-next-line no-control-regex -- control characters are what it matches
export const SEPARATOR = /[\x00-\x20,\x7f]/u;
// eslint-disable-next-line no-control-regex
const SEPARATORS = /[\x00-\x20,\x7f]+/u;
/** The ASCII punctuation kept inside tokens, written for FTS5's option syntax (quotes doubled). */
export const TOKEN_CHARS = Array.from({ length: 0x7f - 0x21 }, (_, i) => String.fromCharCode(0x21 + i))
  .filter((c) => !/[A-Za-z0-9,]/.test(c))
  .join('')
  .replace(/'/g, "''")
  .replace(/"/g, '""');

/**
 * FTS5 keeps only the first 32,768 bytes of a token. A longer run is indexed as pieces of
 * CHUNK characters (at most 32,000 bytes) overlapping by OVERLAP, so that any term of up to
 * OVERLAP characters in it lies whole inside one piece (the spec bounds `search` at 200).
 */
const CHUNK = 8000;
export const OVERLAP = 256;

/** The tokens of a folded text, in order, as the index holds them. */
export function tokensOf(folded: string): string[] {
  const out: string[] = [];
  for (const word of folded.split(SEPARATORS)) {
    if (!word) continue;
    if (word.length <= CHUNK) {
      out.push(word);
      continue;
    }
    const chars = [...word];
    for (let at = 0; ; at += CHUNK - OVERLAP) {
      out.push(chars.slice(at, at + CHUNK).join(''));
      if (at + CHUNK >= chars.length) break;
    }
  }
  return out;
}

// A write's trigger cuts the same fields twice, for the index and for the vocabulary, one call
// after the other: the last call's tokens are kept so that the text is folded and cut once.
let last: { values: unknown[]; tokens: string[] } | undefined;

function tokensOfValues(values: unknown[]): string[] {
  if (last && last.values.length === values.length && last.values.every((v, i) => v === values[i])) return last.tokens;
  const tokens = values.flatMap((v) => (typeof v === 'string' ? tokensOf(searchFold(v)) : []));
  last = { values, tokens };
  return tokens;
}

/** search_tokens(field, ...): the fields' folded tokens as one text for the index (connection.ts). */
export function tokenText(...values: unknown[]): string {
  return tokensOfValues(values).join(' ');
}

/** search_token_list(field, ...): the fields' distinct folded tokens as a JSON array, for the vocabulary. */
export function tokenList(...values: unknown[]): string {
  return JSON.stringify([...new Set(tokensOfValues(values))]);
}
