import { randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import { type Db, WSREP_ON, wsrepOn } from '../../db/connection';
import { countAll } from '../../db/counts';
import { applySearch } from '../predicate';
import { defaultTuning, type SearchTuning } from '../tuning';
import { foldSql, REMOVALS, TABLE_OPTIONS, wordCode, wordTables } from './wordIndex';
import { piecePredicate } from './wordSearch';

/**
 * The counts of terms found in most records, on MySQL, where FULLTEXT would visit every match: for
 * each dense word (`the`) the records lacking it are listed, and the count is the table's less the
 * listed or pending records that fail the scan's predicate. See docs/search.md.
 */

/** Newest docs rows read to choose the dense words. */
const CHOICE_SAMPLE = 1000;
/** At most this many dense words per table. */
const MAX_DENSE = 32;
/** Docs rows read per statement while filling lists. */
const FILL_CHUNK = 20_000;
/** List rows per INSERT. */
const INSERT_CHUNK = 5000;
/** A dense word is dropped only below the tuning's denseShare less this. */
const DROP_MARGIN = 0.1;

/** SQL of a table's dense words and their lists (migration 010, createRecordTable). */
export function mysqlDenseStatements(table: string): string[] {
  const t = wordTables(table);
  return [
    // `fill`: the token of the chooser filling its list; only that one marks it ready.
    `CREATE TABLE \`${t.dense}\` (word_id INT UNSIGNED NOT NULL PRIMARY KEY, ready TINYINT NOT NULL DEFAULT 0, ` +
      `fill BIGINT NOT NULL DEFAULT 0) ${TABLE_OPTIONS}`,
    // By record too: indexPending removes a batch's rows by record id.
    `CREATE TABLE \`${t.without}\` (word_id INT UNSIGNED NOT NULL, id BIGINT UNSIGNED NOT NULL, PRIMARY KEY (word_id, id), ` +
      `KEY \`${t.without}_id\` (id)) ${TABLE_OPTIONS}`,
  ];
}

export async function addDenseWords(db: Knex, table: string): Promise<void> {
  for (const sql of mysqlDenseStatements(table)) await db.raw(sql);
}

/**
 * Makes dense the words held by at least `tuning.denseShare` of the newest records indexed,
 * drops those no longer held, and fills each new word's list; safe beside writers and indexers.
 */
export async function chooseDenseWords(
  db: Knex,
  table: string,
  tuning: Pick<SearchTuning, 'sample' | 'denseShare'> = defaultTuning,
): Promise<{ filled: number; dropped: number }> {
  const t = wordTables(table);
  const sample = (await db(t.docs).orderBy('id', 'desc').limit(CHOICE_SAMPLE).pluck('codes')) as string[];
  const held = new Map<number, number>();
  for (const codes of sample) {
    // A record with no word (white space only) has no code.
    for (const code of codes.split(' ').filter((c) => c !== '')) {
      const id = parseInt(code.slice(1), 36);
      held.set(id, (held.get(id) ?? 0) + 1);
    }
  }
  const share = (id: number) => (held.get(id) ?? 0) / sample.length;
  // A table smaller than search's sample has no common term: nothing to count faster. On a
  // Galera cluster, none at all: what makes a new word wait for indexers under way is a lock, and
  // locks do not reach another node's indexer.
  const none = sample.length < tuning.sample || (await galera(db));
  const current = await db(t.dense).select<{ word_id: number; ready: number }[]>('word_id', 'ready');
  const isDense = new Set(current.map((d) => Number(d.word_id)));
  // A word stays dense down to a lower share than makes one: a word near the line is not dropped
  // and made again at each choice.
  const wanted = none
    ? []
    : [...held.keys()]
        .filter((id) => share(id) >= tuning.denseShare - (isDense.has(id) ? DROP_MARGIN : 0))
        .sort((a, b) => share(b) - share(a))
        .slice(0, MAX_DENSE);
  const dropped = [...isDense].filter((id) => !wanted.includes(id));
  for (const id of dropped) {
    // One transaction: a list is never read without its word, nor its word without all of it.
    // Indexers wait meanwhile (they read the dense words first), writers do not.
    await db.transaction(async (trx) => {
      await trx(t.dense).where({ word_id: id }).delete();
      await trx(t.without).where({ word_id: id }).delete();
    });
  }
  // New words, and words whose fill was cut short (any chooser's, in any process: this one takes
  // them over, and only the chooser holding a word's token marks it ready).
  const unready = new Set(current.filter((d) => !Number(d.ready)).map((d) => Number(d.word_id)));
  const fill = wanted.filter((id) => unready.has(id) || !isDense.has(id));
  if (fill.length) {
    const token = randomInt(1, 2 ** 47);
    // Committed before the fill reads. indexPending's writing transactions lock the removal count's
    // row (shared) before they read the dense words: this waits for those under way, and every
    // later one sees these words and lists its records itself.
    await db.transaction(async (trx) => {
      await trx(REMOVALS).where({ table_name: table }).forUpdate().first('n');
      await trx.raw(
        `INSERT INTO ?? (word_id, ready, fill) VALUES ${fill.map(() => '(?, 0, ?)').join(', ')} ` +
          'ON DUPLICATE KEY UPDATE fill = IF(ready = 0, ?, fill)',
        [t.dense, ...fill.flatMap((id) => [id, token]), token],
      );
    });
    await fillLists(db, table, fill);
    await db(t.dense).whereIn('word_id', fill).where({ ready: 0, fill: token }).update({ ready: 1 });
  }
  return { filled: fill.length, dropped: dropped.length };
}

async function galera(db: Knex): Promise<boolean> {
  const [rows] = (await db.raw(WSREP_ON)) as [Record<string, unknown>[]];
  return wsrepOn(rows);
}

/**
 * Lists, for these words, every indexed record whose docs row lacks them. Plain reads, begun after
 * the words were committed, so they see every docs row an indexer wrote without listing it.
 */
async function fillLists(db: Knex, table: string, words: readonly number[]): Promise<void> {
  const t = wordTables(table);
  // Codes between spaces: a code is found only whole (a longer code may end with a shorter one).
  const chosen = words.map(() => 'SELECT ? AS word_id, ? AS code').join(' UNION ALL ');
  const values = words.flatMap((id) => [id, ` ${wordCode(id)} `]);
  let after = 0;
  for (;;) {
    const [last] = (await db(t.docs)
      .where('id', '>', after)
      .orderBy('id')
      .offset(FILL_CHUNK - 1)
      .limit(1)
      .pluck('id')) as (number | string)[];
    const upTo = last === undefined ? Number.MAX_SAFE_INTEGER : Number(last);
    const [lacking] = (await db.raw(
      `SELECT c.word_id, d.id FROM ?? d JOIN (${chosen}) c ON INSTR(CONCAT(' ', d.codes, ' '), c.code) = 0 WHERE d.id > ? AND d.id <= ?`,
      [t.docs, ...values, after, upTo],
    )) as [{ word_id: number; id: number | string }[]];
    for (let i = 0; i < lacking.length; i += INSERT_CHUNK) {
      const rows = lacking.slice(i, i + INSERT_CHUNK).map((r) => ({ word_id: Number(r.word_id), id: r.id }));
      await db(t.without).insert(rows).onConflict().ignore();
    }
    if (last === undefined) return;
    after = upTo;
  }
}

/**
 * The count of records holding every term, from the dense words' lists, when each term is
 * contained in a dense word (phrases never: their words may all be there, apart); else undefined.
 */
export async function planDenseCount(
  db: Db,
  table: string,
  fields: readonly string[],
  terms: readonly string[],
  collation: string | undefined,
): Promise<(() => Promise<number>) | undefined> {
  const t = wordTables(table);
  const perTerm: number[][] = [];
  for (const term of terms) {
    if (/\s/u.test(term)) return undefined;
    const ids = (await db({ d: t.dense })
      .join({ w: t.words }, 'w.id', 'd.word_id')
      .where('d.ready', 1)
      .whereRaw(piecePredicate('inside', '??', foldSql(collation)), ['w.folded', term])
      .pluck('d.word_id')) as (number | string)[];
    if (!ids.length) return undefined;
    perTerm.push(ids.map(Number));
  }
  // Every record that may not hold some term: in the lists of all the dense words containing
  // it, or pending. Read from the lists first (a join from the table scanned it).
  const listed = () => {
    const ids = db(t.pending).select('id');
    for (const words of perTerm) {
      ids.union(db(t.without).select('id').whereIn('word_id', words).groupBy('id').havingRaw('COUNT(*) = ?', [words.length]));
    }
    return db(table).join(ids.as('c'), 'c.id', `${table}.id`);
  };
  return async () => {
    const holding = listed();
    applySearch(holding, fields, terms, collation);
    const [{ n: candidates }] = await listed().count<{ n: number | string }[]>({ n: '*' });
    const [{ n: holds }] = await holding.count<{ n: number | string }[]>({ n: '*' });
    return (await countAll(db, table)) - Number(candidates) + Number(holds);
  };
}
