import type { Knex } from 'knex';
import type { Db } from '../../db/connection';
import { READ_AS_REPLACEMENT } from '../predicate';
import type { SearchTuning } from '../tuning';
import { spread, trigramsOf } from './trigrams';
import { OVERLAP, SEPARATOR, TOKEN_CHARS } from '../tokenize';

// SQLite's token index: each record's folded text cut into tokens at characters a term never
// holds, and a vocabulary of every token with a trigram index of its own. A term occurs only inside
// tokens, so its records are those of the vocabulary tokens containing it. See docs/search.md.

export interface TokenTables {
  tokens: string;
  vocab: string;
  grams: string;
}

export function tokenTables(table: string): TokenTables {
  return { tokens: `${table}_search_tokens`, vocab: `${table}_search_vocab`, grams: `${table}_search_vocab_grams` };
}

/** Whether the token index decides this (folded) term: no separator, nothing SQLite reads as U+FFFD, short enough. */
export function tokenEligible(folded: string): boolean {
  return !SEPARATOR.test(folded) && !READ_AS_REPLACEMENT.test(folded) && [...folded].length <= OVERLAP;
}

/** An update trigger's WHEN: some search field changed (SQLite's `IS NOT` takes NULL as a value). */
export function sqliteFieldsChanged(fields: readonly string[]): string {
  return fields.map((f) => `new."${f}" IS NOT old."${f}"`).join(' OR ');
}

/** SQL that makes the token index of a table's search fields and its triggers (migration 011, createRecordTable). */
export function sqliteTokenStatements(table: string, fields: readonly string[]): string[] {
  const { tokens, vocab, grams } = tokenTables(table);
  return [
    `CREATE VIRTUAL TABLE "${tokens}" USING fts5(text, content='', contentless_delete=1, detail=none, ` +
      `tokenize="ascii tokenchars '${TOKEN_CHARS}'")`,
    `CREATE TABLE "${vocab}" (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE)`,
    `CREATE VIRTUAL TABLE "${grams}" USING fts5(term, content='', detail=full, tokenize="trigram case_sensitive 1")`,
    `CREATE TRIGGER "${vocab}_insert" AFTER INSERT ON "${vocab}" BEGIN INSERT INTO "${grams}" (rowid, term) VALUES (new.id, new.term); END`,
    ...sqliteTokenFill(table, fields),
    sqliteTokenInsertTrigger(table, fields),
    `CREATE TRIGGER "${tokens}_delete" AFTER DELETE ON "${table}" BEGIN DELETE FROM "${tokens}" WHERE rowid = old.id; END`,
    `CREATE TRIGGER "${tokens}_update" AFTER UPDATE ON "${table}" WHEN ${sqliteFieldsChanged(fields)} BEGIN ` +
      `DELETE FROM "${tokens}" WHERE rowid = old.id; ${addNew(table, fields)} END`,
  ];
}

/** The statements that index a new row (`new`) and add its tokens to the vocabulary. */
function addNew(table: string, fields: readonly string[]): string {
  const { tokens, vocab } = tokenTables(table);
  const of = fields.map((f) => `new."${f}"`).join(', ');
  return (
    `INSERT INTO "${tokens}" (rowid, text) VALUES (new.id, search_tokens(${of})); ` +
    `INSERT OR IGNORE INTO "${vocab}" (term) SELECT value FROM json_each(search_token_list(${of}));`
  );
}

/** The trigger that indexes each row inserted (a bulk load drops it and fills the index after: sqliteBulkIndex). */
export function sqliteTokenInsertTrigger(table: string, fields: readonly string[]): string {
  return `CREATE TRIGGER "${tokenTables(table).tokens}_insert" AFTER INSERT ON "${table}" BEGIN ${addNew(table, fields)} END`;
}

/**
 * Indexes the rows with an id above `?` (bound by the caller; 0 for all), then adds their tokens
 * to the vocabulary from the index itself (fts5vocab): a pass over its terms, where a row at a
 * time would look up every token of every record in the vocabulary.
 */
export function sqliteTokenFill(table: string, fields: readonly string[], above = 0): string[] {
  const { tokens, vocab } = tokenTables(table);
  const terms = `${tokens}_terms`;
  return [
    `INSERT INTO "${tokens}" (rowid, text) SELECT id, search_tokens(${fields.map((f) => `"${f}"`).join(', ')}) FROM "${table}" WHERE id > ${Number(above)}`,
    `CREATE VIRTUAL TABLE temp."${terms}" USING fts5vocab(main, '${tokens}', 'row')`,
    `INSERT OR IGNORE INTO "${vocab}" (term) SELECT term FROM temp."${terms}"`,
    `DROP TABLE temp."${terms}"`,
  ];
}

/** A vocabulary entry: its id is the rowid of its row in the vocabulary's trigram index. */
export interface VocabularyEntry {
  id: number;
  term: string;
}

/**
 * The vocabulary's tokens that the index holds for no record (left by re-texted or deleted
 * records: they cost look-ups, never a wrong result). Read without a lock: see removeTokens.
 */
export async function deadTokens(db: Db, table: string): Promise<VocabularyEntry[]> {
  const { tokens, vocab } = tokenTables(table);
  const terms = `${tokens}_live_terms`;
  return db.transaction(async (trx) => {
    await trx.raw(`CREATE VIRTUAL TABLE temp."${terms}" USING fts5vocab(main, '${tokens}', 'row')`);
    try {
      const rows = await trx.raw<VocabularyEntry[]>(`SELECT id, term FROM "${vocab}" WHERE term NOT IN (SELECT term FROM temp."${terms}")`);
      return rows.map((r) => ({ id: Number(r.id), term: String(r.term) }));
    } finally {
      await trx.raw(`DROP TABLE temp."${terms}"`);
    }
  });
}

/** Entries removed per write transaction: each holds writers off for a few hundred ms at most. */
const REMOVAL_BATCH = 500;

/**
 * Removes these entries from the vocabulary and its trigram index, each only if still held by no
 * record, in write transactions, so that a write adding one back either precedes or follows it.
 */
export async function removeTokens(db: Db, table: string, entries: readonly VocabularyEntry[]): Promise<number> {
  const { tokens, vocab, grams } = tokenTables(table);
  let removed = 0;
  for (let at = 0; at < entries.length; at += REMOVAL_BATCH) {
    removed += await db.transaction(async (trx) => {
      // A write that changes nothing: the transaction holds the write lock from here on.
      await trx.raw(`DELETE FROM "${vocab}" WHERE 0`);
      let n = 0;
      for (const { id, term } of entries.slice(at, at + REMOVAL_BATCH)) {
        const held = await trx.raw<unknown[]>(`SELECT rowid FROM "${tokens}" WHERE "${tokens}" MATCH ? LIMIT 1`, [quoted(term)]);
        if (held.length || !(await trx(vocab).where({ id, term }).first())) continue;
        // A contentless FTS5 table forgets a row given its rowid and the text it indexed.
        await trx.raw(`INSERT INTO "${grams}" ("${grams}", rowid, term) VALUES ('delete', ?, ?)`, [id, term]);
        await trx(vocab).where({ id }).delete();
        n++;
      }
      return n;
    });
  }
  return removed;
}

/** `npm run search-index` on SQLite: the vocabulary's dead tokens, removed. */
export async function pruneVocabulary(db: Db, table: string): Promise<number> {
  return removeTokens(db, table, await deadTokens(db, table));
}

export function sqliteTokenDropStatements(table: string): string[] {
  const { tokens, vocab, grams } = tokenTables(table);
  return [
    ...['insert', 'delete', 'update'].map((event) => `DROP TRIGGER IF EXISTS "${tokens}_${event}"`),
    `DROP TABLE IF EXISTS "${tokens}"`,
    `DROP TABLE IF EXISTS "${vocab}"`,
    `DROP TABLE IF EXISTS "${grams}"`,
  ];
}

/** Trigrams of a term that find the vocabulary's tokens holding it. */
const LOOKED_UP_GRAMS = 3;

/** An FTS5 query for one token, quoted. */
const quoted = (token: string) => `"${token.replace(/"/g, '""')}"`;

/**
 * The terms that decide a search: each once, and none that another holds (a record holding the
 * longer one in a field holds the shorter there too). A search of one term fifty times, or of a
 * term and its pieces, is then one term's query.
 */
export function decidingTerms(folded: readonly string[]): string[] {
  const distinct = [...new Set(folded)];
  return distinct.filter((t) => !distinct.some((other) => other !== t && other.includes(t)));
}

/**
 * The FTS5 query for records holding every term: per term, the OR of the tokens containing it.
 * '' when a term is in no token; undefined (the trigram index or the scan answers) when a term is
 * too short, in too many tokens, or the query would grow too long (SearchTuning).
 */
export async function tokenQuery(
  db: Db | Knex.Transaction,
  table: string,
  folded: readonly string[],
  tuning: SearchTuning,
): Promise<string | undefined> {
  const { vocab, grams } = tokenTables(table);
  const groups: string[] = [];
  let chars = 0;
  for (const term of decidingTerms(folded)) {
    // A few of the term's trigrams narrow the words, and `instr` decides: cheaper than the term as
    // a phrase, which reads every trigram's list with its positions.
    const looked = spread(trigramsOf(term), LOOKED_UP_GRAMS);
    if (!looked.length) return undefined;
    const tokens = (await db(grams)
      .join(vocab, `${vocab}.id`, `${grams}.rowid`)
      .whereRaw('?? MATCH ?', [grams, looked.map(quoted).join(' AND ')])
      .whereRaw('instr(??, ?) > 0', [`${vocab}.term`, term])
      .limit(tuning.termTokens + 1)
      .pluck(`${vocab}.term`)) as string[];
    if (tokens.length > tuning.termTokens) return undefined;
    if (!tokens.length) return '';
    const group = `(${tokens.map(quoted).join(' OR ')})`;
    chars += group.length;
    if (chars > tuning.tokenQueryChars) return undefined;
    groups.push(group);
  }
  return groups.join(' AND ');
}
