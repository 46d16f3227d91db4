import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { collections } from '../../collections';
import { inTransaction } from '../../db/connection';
import { retrying } from '../../db/retry';
import { foldCollation, foldSql } from '../predicate';
import { changePostings, changesOf, codeWords, noteWords, postingsTable, type PostingsChanges } from './postingsTable';
import { blockOf, lowOf } from './postings';

/**
 * The search index on MySQL/MariaDB: per record a document of our own word codes under InnoDB
 * FULLTEXT, so the server's tokenizer never decides what matches; `indexPending` alone writes it.
 * See docs/adr/0011-word-index-own-codes.md.
 */
export interface WordTables {
  words: string;
  /** The trigrams of each vocabulary word's folded form, for the look-up of search terms. */
  grams: string;
  docs: string;
  pending: string;
  /** Words found in nearly every record, chosen by denseWords.ts; `ready` once `without` is full. */
  dense: string;
  /** For each dense word, the indexed records whose tokens lack it (denseWords.ts). */
  without: string;
  /** Per word and block of ids, the records holding it (postingsTable.ts), as the docs rows say. */
  postings: string;
}

export function wordTables(table: string): WordTables {
  return {
    words: `${table}_search_words`,
    grams: `${table}_search_grams`,
    docs: `${table}_search_docs`,
    pending: `${table}_search_pending`,
    dense: `${table}_search_dense`,
    without: `${table}_search_without`,
    postings: postingsTable(table),
  };
}

/** Words of more characters than this have no `folded` copy (a fold maps one character to one). */
export const FOLDED_LENGTH = 255;

export { foldSql };

/** Codes of at least 6 characters: indexed under any innodb_ft_min_token_size up to 6 (default 3). */
const CODE_DIGITS = 5;

export function wordCode(id: number): string {
  return `x${id.toString(36).padStart(CODE_DIGITS, '0')}`;
}

export function tokens(text: unknown): string[] {
  return typeof text === 'string' ? text.split(/\s+/u).filter((t) => t !== '') : [];
}

function hash(word: string): Buffer {
  return createHash('sha256').update(word, 'utf8').digest();
}

const fieldsByTable = new Map<string, readonly string[]>(collections.map((c) => [c.name, c.searchFields]));

/** The search fields of a record table that has a search index, else undefined. */
export function indexedFields(table: string): readonly string[] | undefined {
  return fieldsByTable.get(table);
}

export const TABLE_OPTIONS = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin';

/** SQL of the index's tables and triggers for one table (migration 006, createRecordTable). */
export function mysqlIndexStatements(table: string, fields: readonly string[]): string[] {
  const t = wordTables(table);
  const q = (name: string) => `\`${name}\``;
  const unchanged = fields.map((f) => `NEW.${q(f)} <=> OLD.${q(f)}`).join(' AND ');
  return [
    // `folded`: the word as the scan folds it, for the look-ups of search terms (a scan of this
    // narrow index); NULL for words too long for it, which are folded at look-up instead.
    `CREATE TABLE ${q(t.words)} (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, hash BINARY(32) NOT NULL, ` +
      `word LONGTEXT NOT NULL, folded VARCHAR(${FOLDED_LENGTH}) NULL, UNIQUE KEY ${q(`${t.words}_hash_unique`)} (hash), ` +
      `KEY ${q(`${t.words}_folded`)} (folded)) ${TABLE_OPTIONS}`,
    `CREATE TABLE ${q(t.pending)} (id BIGINT UNSIGNED NOT NULL PRIMARY KEY) ${TABLE_OPTIONS}`,
    `CREATE TRIGGER ${q(`${table}_search_insert`)} AFTER INSERT ON ${q(table)} FOR EACH ROW ${pendingInsert(t, 'NEW')}`,
    `CREATE TRIGGER ${q(`${table}_search_update`)} AFTER UPDATE ON ${q(table)} FOR EACH ROW ` +
      `IF NOT (${unchanged}) THEN ${pendingInsert(t, 'NEW')}; END IF`,
    ...mysqlDocsStatements(table),
  ];
}

function pendingInsert(t: WordTables, row: string): string {
  return `INSERT INTO \`${t.pending}\` (id) VALUES (${row}.id) ON DUPLICATE KEY UPDATE id = id`;
}

/**
 * SQL of the docs table and the delete trigger, and every record listed as pending (migration
 * 008 makes them again this way). A deleted record stays pending
 * until `indexPending` removes its docs row.
 */
export function mysqlDocsStatements(table: string): string[] {
  const t = wordTables(table);
  const q = (name: string) => `\`${name}\``;
  return [
    // Codes are all the index sees: no stopword (none has our shape, but a list may be configured).
    'SET SESSION innodb_ft_enable_stopword = OFF',
    `CREATE TABLE ${q(t.docs)} (id BIGINT UNSIGNED NOT NULL PRIMARY KEY, FTS_DOC_ID BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, ` +
      `codes LONGTEXT NOT NULL, UNIQUE KEY FTS_DOC_ID_INDEX (FTS_DOC_ID), FULLTEXT KEY ${q(`${t.docs}_codes`)} (codes)) ${TABLE_OPTIONS}`,
    `CREATE TRIGGER ${q(`${table}_search_delete`)} AFTER DELETE ON ${q(table)} FOR EACH ROW ${pendingInsert(t, 'OLD')}`,
    // Records already there: pending until indexed (addWordIndex).
    `INSERT IGNORE INTO ${q(t.pending)} (id) SELECT id FROM ${q(table)}`,
  ];
}

/** Characters of a trigram: a term's piece of at least this many is looked up by its trigrams. */
export const GRAM = 3;

/**
 * SQL of the vocabulary's trigram table (migration 007, createRecordTable): each word's trigrams
 * as the scan folds it, kept by a trigger on the vocabulary. Bytes, so no collation decides.
 */
export function mysqlGramStatements(table: string): string[] {
  const t = wordTables(table);
  const q = (name: string) => `\`${name}\``;
  const gram = (row: string, i: string) => `CAST(SUBSTRING(${row}.folded, ${i}, ${GRAM}) AS BINARY)`;
  return [
    `CREATE TABLE ${q(t.grams)} (gram VARBINARY(${4 * GRAM}) NOT NULL, word_id INT UNSIGNED NOT NULL, ` +
      `PRIMARY KEY (gram, word_id)) ENGINE=InnoDB`,
    `CREATE TRIGGER ${q(`${t.words}_grams`)} AFTER INSERT ON ${q(t.words)} FOR EACH ROW BEGIN DECLARE i INT DEFAULT 1; ` +
      `WHILE i <= CHAR_LENGTH(NEW.folded) - ${GRAM - 1} DO ` +
      `INSERT IGNORE INTO ${q(t.grams)} (gram, word_id) VALUES (${gram('NEW', 'i')}, NEW.id); SET i = i + 1; END WHILE; END`,
    `INSERT IGNORE INTO ${q(t.grams)} (gram, word_id) ` +
      `WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${FOLDED_LENGTH - GRAM + 1}) ` +
      `SELECT ${gram('w', 'n.i')}, w.id FROM ${q(t.words)} w JOIN n ON n.i <= CHAR_LENGTH(w.folded) - ${GRAM - 1}`,
  ];
}

/** Adds a table's vocabulary trigrams (migration 007, createRecordTable). */
export async function addWordGrams(db: Knex, table: string): Promise<void> {
  for (const sql of mysqlGramStatements(table)) await db.raw(sql);
}

export function mysqlGramDropStatements(table: string): string[] {
  const t = wordTables(table);
  return [`DROP TRIGGER IF EXISTS \`${t.words}_grams\``, `DROP TABLE IF EXISTS \`${t.grams}\``];
}

export function mysqlDropStatements(table: string): string[] {
  const t = wordTables(table);
  return [
    ...['insert', 'update', 'delete'].map((e) => `DROP TRIGGER IF EXISTS \`${table}_search_${e}\``),
    ...mysqlGramDropStatements(table),
    ...[t.docs, t.words, t.pending, t.dense, t.without, t.postings].map((name) => `DROP TABLE IF EXISTS \`${name}\``),
  ];
}

/**
 * Makes a table's word index, its records listed as pending rather than indexed here, so that a
 * migration does not hold other instances' start for hours; `npm run search-index` indexes them.
 */
export async function addWordIndex(db: Knex, table: string, fields: readonly string[]): Promise<void> {
  await onOneConnection(db, mysqlIndexStatements(table, fields));
}

/** Runs these statements on one connection (a session setting must hold for the CREATE TABLE). */
async function onOneConnection(db: Knex, statements: readonly string[]): Promise<void> {
  // A migration already runs on one (its transaction); a savepoint inside it would be ended by
  // the DDL's implicit commit, which knex reports as a warning on every start.
  const run = async (conn: Knex) => {
    for (const sql of statements) await conn.raw(sql);
  };
  if (inTransaction(db)) await run(db);
  else await db.transaction(run);
}

/**
 * Makes a table's docs table and delete trigger again as mysqlDocsStatements says, every record
 * pending until indexed (migration 008).
 */
export async function remakeDocs(db: Knex, table: string): Promise<void> {
  const t = wordTables(table);
  await onOneConnection(db, [
    `DROP TRIGGER IF EXISTS \`${table}_search_delete\``,
    `DROP TABLE IF EXISTS \`${t.docs}\``,
    ...mysqlDocsStatements(table),
  ]);
  // The postings hold what the docs rows held (none now), where a migration made them already.
  if (await db.schema.hasTable(t.postings)) await db(t.postings).delete();
}

/** Rows of the vocabulary in one statement at most. */
const LOOKUP_CHUNK = 1000;
/** Docs rows per INSERT (a row's codes take about 1 KB for a 1 KB record). */
const DOCS_CHUNK = 2000;

/** The vocabulary ids of these tokens, adding those it lacks (inside the caller's transaction). */
async function wordIds(trx: Knex | Knex.Transaction, words: string, all: readonly string[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  if (!all.length) return ids;
  const collation = await foldCollation(trx);
  const byHash = new Map<string, string>();
  for (const w of all) byHash.set(hash(w).toString('hex'), w);
  // Sorted, so that writers adding the same new words lock them in one order (fewer deadlocks).
  const hashes = [...byHash.keys()].sort();
  const found = async (chunk: string[], lock: boolean) => {
    const q = trx(words)
      .whereIn(
        'hash',
        chunk.map((h) => Buffer.from(h, 'hex')),
      )
      .select('id', 'hash');
    // After an insert that found a duplicate, a locking read: it sees the word another
    // transaction committed since this one's snapshot.
    if (lock) q.forShare();
    for (const r of (await q) as { id: number; hash: Buffer }[]) ids.set(byHash.get(r.hash.toString('hex'))!, Number(r.id));
  };
  for (let i = 0; i < hashes.length; i += LOOKUP_CHUNK) await found(hashes.slice(i, i + LOOKUP_CHUNK), false);
  // Looked up first, inserted only when missing: INSERT IGNORE would spend an AUTO_INCREMENT
  // value on every word already known.
  const missing = hashes.filter((h) => !ids.has(byHash.get(h)!));
  for (let i = 0; i < missing.length; i += LOOKUP_CHUNK) {
    const chunk = missing.slice(i, i + LOOKUP_CHUNK);
    await trx(words)
      .insert(
        chunk.map((h) => {
          const word = byHash.get(h)!;
          const folded = [...word].length <= FOLDED_LENGTH ? trx.raw(foldSql(collation), [word]) : null;
          return { hash: Buffer.from(h, 'hex'), word, folded };
        }),
      )
      .onConflict()
      .ignore();
    await found(chunk, true);
  }
  return ids;
}

export type IndexedRow = Record<string, unknown> & { id: number | string };

/** A distinct token of one batch: its vocabulary id and code, once known, and the last record that held it. */
interface BatchWord {
  word: string;
  id: number;
  code: string;
  row: number;
  /** Its index among the dense words, or -1. */
  dense: number;
  /** The block of the last record noted under it, and that block's list of places to add. */
  block: number;
  adds: number[];
}

/**
 * Writes the docs rows of these records; returns the vocabulary ids this batch read or added,
 * to keep only once it commits (a word added by a batch rolled back is gone). `known`: ids from
 * earlier committed batches; `dense`: the dense words' ids.
 */
async function insertDocs(
  trx: Knex | Knex.Transaction,
  table: string,
  fields: readonly string[],
  rows: readonly IndexedRow[],
  known: ReadonlyMap<string, number>,
  dense: readonly number[],
): Promise<Map<string, number>> {
  if (!rows.length) return new Map();
  const t = wordTables(table);
  // One look-up per token in a map of the batch's few thousand words, not the whole vocabulary:
  // this loop is the indexer's hottest.
  const batch = new Map<string, BatchWord>();
  const perRow = rows.map((r, row) => {
    const held: BatchWord[] = [];
    for (const f of fields)
      for (const token of tokens(r[f])) {
        let w = batch.get(token);
        if (!w) batch.set(token, (w = { word: token, id: known.get(token) ?? 0, code: '', row: -1, dense: -1, block: -1, adds: [] }));
        if (w.row !== row) {
          w.row = row;
          held.push(w);
        }
      }
    return held;
  });
  const missing = [...batch.values()].filter((w) => !w.id);
  const fresh = await wordIds(
    trx,
    t.words,
    missing.map((w) => w.word),
  );
  const denseIndex = new Map(dense.map((id, i) => [id, i]));
  for (const w of batch.values()) {
    w.id ||= fresh.get(w.word)!;
    w.code = wordCode(w.id);
    w.dense = denseIndex.get(w.id) ?? -1;
  }
  const docs = rows.map((r, i) => ({ id: r.id, codes: perRow[i].map((w) => w.code).join(' ') }));
  // In statements of DOCS_CHUNK rows: a bulk load's batch of tens of thousands would pass the
  // server's max_allowed_packet in one.
  for (let i = 0; i < docs.length; i += DOCS_CHUNK) await trx(t.docs).insert(docs.slice(i, i + DOCS_CHUNK));
  // The postings changes, noted through each word's own list of its block's places: a map
  // look-up per word and block rather than two per word of every record.
  const changes: PostingsChanges = new Map();
  rows.forEach((r, i) => {
    const id = Number(r.id);
    const block = blockOf(id);
    for (const w of perRow[i]) {
      if (w.block !== block) {
        w.block = block;
        w.adds = changesOf(changes, w.id, block).add;
      }
      w.adds.push(lowOf(id));
    }
  });
  await changePostings(trx, table, changes);
  // Each record under the dense words it lacks (denseWords.ts).
  if (dense.length) {
    const without = rows.flatMap((r, i) => {
      const has = new Uint8Array(dense.length);
      for (const w of perRow[i]) if (w.dense >= 0) has[w.dense] = 1;
      return dense.filter((_, k) => !has[k]).map((w) => ({ word_id: w, id: r.id }));
    });
    // Ignored duplicates: a list being filled may have read this record's previous docs row.
    for (let i = 0; i < without.length; i += LOOKUP_CHUNK)
      await trx(t.without)
        .insert(without.slice(i, i + LOOKUP_CHUNK))
        .onConflict()
        .ignore();
  }
  return fresh;
}

/** Vocabulary ids kept by one indexPending call at most (a Zipf vocabulary repeats its words). */
const KNOWN_WORDS = 500_000;

/**
 * Brings pending records' docs rows up to date, a batch at a time, in two transactions per batch
 * (docs/adr/0011-word-index-own-codes.md); an indexer waits at the first pending row another
 * holds. Returns how many were indexed.
 */
export async function indexPending(
  db: Knex,
  table: string,
  // onProgress is awaited, between batches and holding nothing, so that a caller can pace indexers.
  options: { batch?: number; fields?: readonly string[]; onProgress?: (n: number) => void | Promise<void> } = {},
): Promise<number> {
  const fields = options.fields ?? indexedFields(table);
  if (!fields) return 0;
  const t = wordTables(table);
  const batch = options.batch ?? 1000;
  const known = new Map<string, number>();
  let done = 0;
  for (;;) {
    // Two indexers adding the same new words may deadlock (or conflict between Galera nodes):
    // the transaction is simply run again.
    const ids = await retrying(() =>
      db.transaction(async (trx) => {
        // The removal count's row first: while a search holds it (plan.ts: inSearchSnapshot), this waits
        // holding nothing a writer's trigger needs (the pending rows and the gaps between them).
        await trx(REMOVALS).where({ table_name: table }).forUpdate().first('n');
        const ids = (await trx(t.pending).orderBy('id').limit(batch).forUpdate().pluck('id')) as (number | string)[];
        if (ids.length) await removeDocs(trx, table, ids);
        if (ids.length) await trx(t.without).whereIn('id', ids).delete();
        return ids;
      }),
    );
    if (!ids.length) return done;
    const { n, fresh } = await retrying(() =>
      db.transaction(async (trx) => {
        // A lock shared with other indexers, taken before the pending rows (as the first
        // transaction takes it): a word being made dense waits for it (denseWords.ts).
        await trx(REMOVALS).where({ table_name: table }).forShare().first('n');
        // Read while the lock is held and before any plain read (MariaDB 11.6's snapshot
        // isolation refuses a locking read of rows changed since the snapshot).
        const dense = (await trx(t.dense).forShare().pluck('word_id')).map(Number);
        const locked = (await trx(t.pending).whereIn('id', ids).forUpdate().pluck('id')) as (number | string)[];
        // A docs row written meanwhile by another indexer, for a record changed again since: its
        // removal is a next batch's, never this transaction's.
        const written = new Set((await trx(t.docs).whereIn('id', locked).forShare().pluck('id')).map(String));
        const todo = locked.filter((id) => !written.has(String(id)));
        if (!todo.length) return { n: 0, fresh: new Map<string, number>() };
        const rows: IndexedRow[] = await trx(table)
          .whereIn('id', todo)
          .select('id', ...fields);
        const fresh = await insertDocs(trx, table, fields, rows, known, dense);
        await trx(t.pending).whereIn('id', todo).delete();
        return { n: todo.length, fresh };
      }),
    );
    if (known.size + fresh.size > KNOWN_WORDS) known.clear();
    for (const [w, id] of fresh) known.set(w, id);
    done += n;
    if (n) await options.onProgress?.(done);
  }
}

/** Removes these records' docs rows, and their words from the postings, in the caller's transaction. */
async function removeDocs(trx: Knex.Transaction, table: string, ids: readonly (number | string)[]): Promise<void> {
  const t = wordTables(table);
  const old = await trx(t.docs).whereIn('id', ids).forUpdate().select<{ id: number | string; codes: string }[]>('id', 'codes');
  if (!old.length) return;
  const changes: PostingsChanges = new Map();
  for (const r of old) noteWords(changes, Number(r.id), codeWords(r.codes), false);
  await trx(t.docs)
    .whereIn(
      'id',
      old.map((r) => r.id),
    )
    .delete();
  await changePostings(trx, table, changes);
  await noteRemoval(trx, table);
}

/**
 * Transactions that removed docs rows, counted per table (migration 009): FULLTEXT applies a
 * removal as it commits, whatever a snapshot holds, so a search compares the count at its start
 * and end (plan.ts: inSearchSnapshot).
 */
export const REMOVALS = 'search_removals';

async function noteRemoval(trx: Knex.Transaction, table: string): Promise<void> {
  // Its row stays locked to the commit, in which InnoDB notes the removed doc ids: a search's
  // locking read of the count waits for it, then sees the new count.
  await trx.raw('INSERT INTO ?? (table_name, n) VALUES (?, 1) ON DUPLICATE KEY UPDATE n = n + 1', [REMOVALS, table]);
}

/**
 * The count of `table`'s removals as the snapshot has it, or (`latest`) as committed now: a
 * locking read that waits for a committing removal and holds the next off until the reader ends.
 */
export async function removalsOf(db: Knex | Knex.Transaction, table: string, latest: boolean): Promise<number> {
  const query = db(REMOVALS).where({ table_name: table }).first('n');
  if (latest) query.forShare();
  const row = (await query) as { n: number | string } | undefined;
  return Number(row?.n ?? 0);
}

/** A table's row of the removal count (createRecordTable; migration 009 made the first five's). */
export async function addRemovalsRow(db: Knex, table: string): Promise<void> {
  await db(REMOVALS).insert({ table_name: table }).onConflict('table_name').ignore();
}

/** Empties the index of a table emptied by TRUNCATE (which fires no trigger). */
export async function emptyWordIndex(db: Knex, table: string): Promise<void> {
  const t = wordTables(table);
  for (const name of [t.docs, t.pending, t.grams, t.words, t.dense, t.without, t.postings]) await db.raw('TRUNCATE TABLE ??', [name]);
}
