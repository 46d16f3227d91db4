import type { Knex } from 'knex';
import { blockOf, change, type Container, encode, IdSet, lowOf, type PostingsRow } from './postings';

/**
 * The postings table of a record table on MySQL: one row per word and block of ids holding the
 * word's container (postings.ts). It always holds exactly what the docs rows hold: indexPending
 * changes both in one transaction. See docs/adr/0018-block-postings.md.
 */
export function postingsTable(table: string): string {
  return `${table}_search_postings`;
}

/** The vocabulary id a docs row's code stands for (the inverse of wordIndex.ts' wordCode). */
export function codeWord(code: string): number {
  return parseInt(code.slice(1), 36);
}

/** The vocabulary ids of a docs row's codes. */
export function codeWords(codes: string): number[] {
  return codes
    .split(' ')
    .filter((c) => c !== '')
    .map(codeWord);
}

export function mysqlPostingsStatements(table: string): string[] {
  return [
    `CREATE TABLE \`${postingsTable(table)}\` (word_id INT UNSIGNED NOT NULL, block INT UNSIGNED NOT NULL, ` +
      'card INT UNSIGNED NOT NULL, ids MEDIUMBLOB NOT NULL, PRIMARY KEY (word_id, block)) ' +
      'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin',
  ];
}

/** Docs rows read per statement while filling the table. */
const FILL_CHUNK = 5000;
/** Bytes of containers per INSERT, well under the server's max_allowed_packet (16 MB by default). */
const INSERT_BYTES = 2 * 1024 * 1024;
/** Words per locking read of their rows. */
const LOCK_CHUNK = 1000;

/**
 * Makes a record table's postings table and fills it from its docs rows, a block of ids at a
 * time (pending records included: their docs rows are in the postings as in FULLTEXT).
 */
export async function addPostings(db: Knex, table: string, docs: string): Promise<void> {
  for (const sql of mysqlPostingsStatements(table)) await db.raw(sql);
  await fillPostings(db, table, docs);
}

async function fillPostings(db: Knex, table: string, docs: string): Promise<void> {
  let after = 0;
  let block = -1;
  let words = new Map<number, number[]>();
  const flush = async () => {
    const rows = [...words].sort((a, b) => a[0] - b[0]).map(([word, lows]) => ({ word_id: word, block, ...encode(lows) }));
    await insertRows(db, table, rows);
    words = new Map();
  };
  for (;;) {
    const rows = await db(docs)
      .where('id', '>', after)
      .orderBy('id')
      .limit(FILL_CHUNK)
      .select<{ id: number | string; codes: string }[]>('id', 'codes');
    for (const r of rows) {
      const id = Number(r.id);
      if (blockOf(id) !== block) {
        if (words.size) await flush();
        block = blockOf(id);
      }
      // Docs rows are read by id: each word's places come sorted, each once (codes are distinct).
      for (const word of new Set(codeWords(r.codes))) {
        const lows = words.get(word);
        if (lows) lows.push(lowOf(id));
        else words.set(word, [lowOf(id)]);
      }
    }
    if (rows.length < FILL_CHUNK) break;
    after = Number(rows[rows.length - 1].id);
  }
  if (words.size) await flush();
}

type Row = PostingsRow & { word_id: number };

/** Writes these rows, new or replacing, in statements of about INSERT_BYTES. */
async function insertRows(db: Knex, table: string, rows: readonly Row[]): Promise<void> {
  for (let i = 0; i < rows.length;) {
    let bytes = 0;
    let j = i;
    while (j < rows.length && (j === i || bytes + rows[j].ids.length <= INSERT_BYTES)) bytes += rows[j++].ids.length;
    const chunk = rows.slice(i, j);
    await db.raw(
      `INSERT INTO ?? (word_id, block, card, ids) VALUES ${chunk.map(() => '(?, ?, ?, ?)').join(', ')} ` +
        'ON DUPLICATE KEY UPDATE card = VALUES(card), ids = VALUES(ids)',
      [postingsTable(table), ...chunk.flatMap((r) => [r.word_id, r.block, r.card, r.ids])],
    );
    i = j;
  }
}

/** One word's places to add and to remove in one block. */
export interface BlockChanges {
  add: number[];
  remove: number[];
}

/** Per word, per block, the places to add and to remove. */
export type PostingsChanges = Map<number, Map<number, BlockChanges>>;

/** The changes noted for `word` in `block`, empty until something is noted there. */
export function changesOf(changes: PostingsChanges, word: number, block: number): BlockChanges {
  let blocks = changes.get(word);
  if (!blocks) changes.set(word, (blocks = new Map<number, BlockChanges>()));
  let one = blocks.get(block);
  if (!one) blocks.set(block, (one = { add: [], remove: [] }));
  return one;
}

/** Notes that record `id` gains (or loses) each of these words. */
export function noteWords(changes: PostingsChanges, id: number, words: Iterable<number>, gains: boolean): void {
  const block = blockOf(id);
  const low = lowOf(id);
  for (const word of words) {
    const one = changesOf(changes, word, block);
    (gains ? one.add : one.remove).push(low);
  }
}

/** `xs` sorted and distinct; as given when it is already (a bulk load notes ids in order). */
function sortedDistinct(xs: number[]): number[] {
  for (let i = 1; i < xs.length; i++) if (xs[i] <= xs[i - 1]) return [...new Set(xs)].sort((a, b) => a - b);
  return xs;
}

/**
 * Applies these changes inside the caller's transaction: each (word, block) row read with a lock,
 * in (word, block) order so that indexers lock the common words' rows in one order, changed in
 * Node, and written back (or deleted once empty) in a few statements.
 */
export async function changePostings(trx: Knex, table: string, changes: PostingsChanges): Promise<void> {
  if (!changes.size) return;
  const name = postingsTable(table);
  const words = [...changes.keys()].sort((a, b) => a - b);
  const written: Row[] = [];
  const emptied = new Map<number, number[]>();
  for (let i = 0; i < words.length; i += LOCK_CHUNK) {
    const chunk = words.slice(i, i + LOCK_CHUNK);
    const blocks = [...new Set(chunk.flatMap((w) => [...changes.get(w)!.keys()]))];
    // Every (word, block) pair of the chunk's words and blocks: a batch's records lie in one or two
    // blocks, so few rows are locked beyond those changed.
    const current = await trx(name)
      .whereIn('word_id', chunk)
      .whereIn('block', blocks)
      .orderBy([
        { column: 'word_id', order: 'asc' },
        { column: 'block', order: 'asc' },
      ])
      .forUpdate()
      .select<{ word_id: number; block: number; card: number; ids: Buffer }[]>('word_id', 'block', 'card', 'ids');
    const held = new Map<string, Container>(current.map((r) => [`${r.word_id}:${r.block}`, { card: Number(r.card), ids: r.ids }]));
    for (const word of chunk) {
      for (const [block, { add, remove }] of changes.get(word)!) {
        const before = held.get(`${word}:${block}`);
        const after = change(before, sortedDistinct(add), sortedDistinct(remove));
        if (after) written.push({ word_id: word, block, ...after });
        else if (before) emptied.set(block, [...(emptied.get(block) ?? []), word]);
      }
    }
  }
  await insertRows(trx, table, written);
  for (const [block, gone] of emptied)
    for (let i = 0; i < gone.length; i += LOCK_CHUNK)
      await trx(name)
        .where({ block })
        .whereIn('word_id', gone.slice(i, i + LOCK_CHUNK))
        .delete();
}

/** The records holding any of these words, from their postings rows (as read by this snapshot). */
export async function readWords(db: Knex, table: string, words: readonly number[]): Promise<IdSet> {
  const rows: PostingsRow[] = [];
  for (let i = 0; i < words.length; i += LOCK_CHUNK) {
    const got = await db(postingsTable(table))
      .whereIn('word_id', words.slice(i, i + LOCK_CHUNK))
      .select<{ block: number; card: number; ids: Buffer }[]>('block', 'card', 'ids');
    for (const r of got) rows.push({ block: Number(r.block), card: Number(r.card), ids: r.ids });
  }
  return IdSet.of(rows);
}
