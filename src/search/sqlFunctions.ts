import type BetterSqlite3 from 'better-sqlite3';
import { searchFold } from './fold';
import { tokenList, tokenText } from './tokenize';

// SQLite's own lower() folds ASCII only: search_fold folds every alphabet, one character at a
// time as MySQL does (toLowerCase alone would turn a final Σ into ς, which "σ" does not find).
function unicodeLower(value: unknown): unknown {
  return typeof value === 'string' ? searchFold(value) : value;
}

function searchHolds(value: unknown, folded: unknown): number | null {
  return typeof value === 'string' && typeof folded === 'string' ? Number(searchFold(value).includes(folded)) : null;
}

/** The functions search's predicate and triggers call, on every new SQLite connection (index.ts adds them). */
export function registerSqliteFunctions(conn: BetterSqlite3.Database): void {
  conn.function('lower', { deterministic: true }, unicodeLower);
  // Under its own name so that a connection without it fails to write rather than index text
  // with SQLite's ASCII-only lower().
  conn.function('search_fold', { deterministic: true }, unicodeLower);
  // Search's predicate: the field, folded, holds the (folded) term (predicate.ts).
  conn.function('search_holds', { deterministic: true }, searchHolds);
  // The triggers of the token index before the sets call these: a database migrated from before
  // them runs migration 015's rewrite of every row with those triggers still in place.
  conn.function('search_tokens', { deterministic: true, varargs: true }, tokenText);
  conn.function('search_token_list', { deterministic: true, varargs: true }, tokenList);
}
