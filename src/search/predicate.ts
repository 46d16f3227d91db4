import type { Knex } from 'knex';
import { type Db, isMysql, perPool, poolKey } from '../db/connection';
import { searchFold } from './fold';

/**
 * Splits a search into terms: white space and commas separate terms, and a double-quoted
 * phrase is one term (a quote left open runs to the end). Empty terms are dropped, and a term
 * given again is kept once.
 */
export function parseSearch(search: string): string[] {
  const terms: string[] = [];
  let current = '';
  let quoted = false;
  for (const ch of search) {
    if (ch === '"') {
      if (current) terms.push(current);
      current = '';
      quoted = !quoted;
    } else if (!quoted && (ch === ',' || /\s/u.test(ch))) {
      if (current) terms.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  if (current) terms.push(current);
  // A phrase of only white space would match every record with a space: it filters nothing. A term
  // given again filters nothing more, but would cost the index a look-up each.
  return [...new Set(terms.filter((t) => t.trim() !== ''))];
}

/**
 * MySQL's LOWER folds case with the tables of the collation it is given; the binary collation's
 * are old and miss whole alphabets (Glagolitic, Deseret, Adlam, ...). These follow Unicode 14
 * (MariaDB 10.10+) and 9 (MySQL 8); the first one the server has is used for search.
 */
const FOLD_COLLATIONS = ['utf8mb4_uca1400_as_cs', 'utf8mb4_0900_as_cs'];
/** Kept per connection settings, which a pool and its transactions share. */
const foldCollations = new WeakMap<object, Promise<string | undefined>>();

export function foldCollation(db: Db | Knex.Transaction): Promise<string | undefined> {
  if (!isMysql(db)) return Promise.resolve(undefined);
  return perPool(foldCollations, db, () => {
    const found = firstKnownCollation(db);
    // A failed look-up (database down) is not remembered; the next search asks again.
    found.catch(() => foldCollations.delete(poolKey(db)));
    return found;
  });
}

async function firstKnownCollation(db: Db | Knex.Transaction): Promise<string | undefined> {
  for (const name of FOLD_COLLATIONS) {
    try {
      await db.raw(`SELECT _utf8mb4'a' COLLATE ${name} AS a`);
      return name;
    } catch (err) {
      if ((err as { code?: string }).code !== 'ER_UNKNOWN_COLLATION') throw err;
    }
  }
  return undefined;
}

/** MySQL: the scan's fold of a bound value (or `??`, a column), as text compared byte for byte. */
export function foldSql(collation: string | undefined, value = '?'): string {
  return `LOWER(${value} COLLATE ${collation ?? 'utf8mb4_bin'}) COLLATE utf8mb4_bin`;
}

/**
 * SQLite reads a lone surrogate, U+FFFE and U+FFFF as U+FFFD, in LIKE and in the trigram
 * tokenizer alike, where the fold keeps them apart: in a term, one of these (or U+FFFD itself)
 * would match any of the others there. Such a term is decided by the fold (search_holds).
 */
export const READ_AS_REPLACEMENT = /[\p{Cs}\uFFFD-\uFFFF]/u;

/**
 * The scan's predicate, the definition of a match: every term a substring of some search field's
 * case fold. With `likely` (SQLite, rows that mostly match) SQLite's cheaper LIKE is tried first;
 * a row it misses still goes to search_holds.
 */
export function applySearch(
  query: Knex.QueryBuilder,
  fields: readonly string[],
  terms: readonly string[],
  collation?: string,
  likely = false,
): void {
  if (!isMysql(query)) {
    // One call of the fold (JavaScript, connection.ts) per field that also searches: cheaper than
    // INSTR(LOWER(..)), which sends each folded text back to SQLite.
    for (const folded of terms.map(searchFold)) {
      // LIKE reads text up to a NUL only, so such a term would stand for a shorter one.
      const like =
        likely && !folded.includes('\0') && !READ_AS_REPLACEMENT.test(folded)
          ? `%${folded.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
          : undefined;
      query.where((group) => {
        for (const field of fields) {
          if (like) group.orWhereRaw(`?? LIKE ? ESCAPE '\\' OR search_holds(??, ?)`, [field, like, field, folded]);
          else group.orWhereRaw('search_holds(??, ?)', [field, folded]);
        }
      });
    }
    return;
  }
  // Folded with the collation's case tables, then compared byte for byte, as SQLite compares.
  const fold = collation ? `LOWER(?? COLLATE ${collation}) COLLATE utf8mb4_bin` : 'LOWER(??)';
  const term = collation ? `LOWER(? COLLATE ${collation}) COLLATE utf8mb4_bin` : 'LOWER(?)';
  for (const value of terms) {
    query.where((group) => {
      for (const field of fields) group.orWhereRaw(`INSTR(${fold}, ${term}) > 0`, [field, value]);
    });
  }
}
