import type { Knex } from 'knex';

/**
 * Splits a search into terms: white space and commas separate terms, and a double-quoted
 * phrase is one term (a quote left open runs to the end). Empty terms are dropped.
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
  // A phrase of only white space ("  ") would match every record with a space; it filters nothing.
  return terms.filter((t) => t.trim() !== '');
}

/**
 * Every term must occur in at least one search field. INSTR rather than LIKE, so that `%`, `_`
 * and `\` are never wildcards; LOWER on both sides folds case for every alphabet (SQLite's lower
 * is replaced in connection.ts to do the same). Identifiers and values are always bound.
 */
export function applySearch(query: Knex.QueryBuilder, fields: readonly string[], terms: readonly string[]): void {
  for (const term of terms) {
    query.where((group) => {
      for (const field of fields) group.orWhereRaw('INSTR(LOWER(??), LOWER(?)) > 0', [field, term]);
    });
  }
}
