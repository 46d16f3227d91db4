// The sets of one record table, stored in its database: a row per key and block of ids holding a
// roaring bitmap (portable format), the vocabulary in the order words arrived, and the pairable
// words. The same statements on MySQL and SQLite; keys compare as bytes on both.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { RoaringBitmap32 } from 'roaring';
import { isMysql } from '../../db/connection';
import { WORD } from './keys';
import type { SetReader } from './plan';
import { Vocabulary } from './vocabulary';

/** Ids per stored set: a bitmap of one block is at most 8 KB. */
export const BLOCK_BITS = 16;
export const BLOCK_SIZE = 1 << BLOCK_BITS;
/** Keys and ids per statement. */
const BATCH = 500;

export interface SetTables {
  sets: string;
  /** Every word that has a set, numbered as it arrived, so readers fetch only what is new. */
  words: string;
  pairable: string;
}

export function setTables(table: string): SetTables {
  return { sets: `${table}_search_sets`, words: `${table}_search_set_words`, pairable: `${table}_search_pairable` };
}

/** Creates a record table's set tables (empty). */
export async function createSetTables(db: Knex, table: string): Promise<void> {
  const t = setTables(table);
  if (isMysql(db)) {
    // Keys up to a word piece of 400 characters in UTF-8 and its prefix.
    await db.raw(
      `CREATE TABLE ?? (k VARBINARY(1700) NOT NULL, block INT UNSIGNED NOT NULL, bits MEDIUMBLOB NOT NULL, PRIMARY KEY (k, block)) ENGINE=InnoDB ROW_FORMAT=DYNAMIC`,
      [t.sets],
    );
    await db.raw(
      `CREATE TABLE ?? (seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, word VARBINARY(1700) NOT NULL, changes BIGINT NOT NULL DEFAULT 0, UNIQUE KEY ?? (word)) ENGINE=InnoDB ROW_FORMAT=DYNAMIC`,
      [t.words, `${t.words}_word`],
    );
    await db.raw(`CREATE TABLE ?? (word VARBINARY(1700) NOT NULL PRIMARY KEY) ENGINE=InnoDB ROW_FORMAT=DYNAMIC`, [t.pairable]);
  } else {
    await db.raw(`CREATE TABLE ?? (k BLOB NOT NULL, block INTEGER NOT NULL, bits BLOB NOT NULL, PRIMARY KEY (k, block)) WITHOUT ROWID`, [
      t.sets,
    ]);
    await db.raw(`CREATE TABLE ?? (seq INTEGER PRIMARY KEY AUTOINCREMENT, word BLOB NOT NULL UNIQUE, changes INTEGER NOT NULL DEFAULT 0)`, [
      t.words,
    ]);
    await db.raw(`CREATE TABLE ?? (word BLOB NOT NULL PRIMARY KEY) WITHOUT ROWID`, [t.pairable]);
  }
  await markVocabulary(db, table);
}

/**
 * The vocabulary's first row names this instance of it: a reader that knew another (the
 * tables made again, or emptied) reads it all again. NUL is no letter, so it is no word.
 */
async function markVocabulary(db: Knex, table: string): Promise<void> {
  await db(setTables(table).words).insert({ seq: 1, word: Buffer.from(`\0${randomUUID()}`) });
}

/** Empties a record table's sets (after TRUNCATE of its records, or before filling them anew). */
export async function emptySetTables(db: Knex, table: string): Promise<void> {
  for (const name of Object.values<string>({ ...setTables(table) })) await db(name).delete();
  await markVocabulary(db, table);
}

export async function dropSetTables(db: Knex, table: string): Promise<void> {
  for (const name of Object.values<string>({ ...setTables(table) })) await db.schema.dropTableIfExists(name);
}

/** What a batch of writes changes in one key's set. */
export interface SetChange {
  key: string;
  add: ArrayLike<number>;
  remove: ArrayLike<number>;
}

/**
 * Applies changes to the stored sets, in the caller's transaction: each touched block's row is
 * read, changed and written back (or deleted once empty); new words join the vocabulary.
 */
export async function changeSets(trx: Knex.Transaction, table: string, changes: readonly SetChange[]): Promise<void> {
  const t = setTables(table);
  await lockSets(trx, table);
  const words: Buffer[] = [];
  // In one order, so that indexers of other processes lock the same rows in the same order.
  const sorted = [...changes].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (let i = 0; i < sorted.length; i += BATCH) {
    const batch = sorted.slice(i, i + BATCH);
    const stored = new Map<string, RoaringBitmap32>();
    const read = trx(t.sets)
      .select('k', 'block', 'bits')
      .whereIn(
        'k',
        batch.map((c) => Buffer.from(c.key)),
      );
    // MySQL: locked, or another process's indexer could write the same block from the same read.
    // SQLite's writers take turns for the whole transaction.
    const rows = (await (isMysql(trx) ? read.forUpdate() : read)) as { k: Buffer; block: number; bits: Buffer }[];
    for (const r of rows) stored.set(`${Number(r.block)}:${r.k.toString()}`, RoaringBitmap32.deserialize(r.bits, 'portable'));
    const written: { k: Buffer; block: number; bits: Buffer }[] = [];
    const emptied: [Buffer, number][] = [];
    for (const change of batch) {
      const k = Buffer.from(change.key);
      for (const [block, add, remove] of byBlock(change.add, change.remove)) {
        const name = `${block}:${change.key}`;
        const set = stored.get(name) ?? new RoaringBitmap32();
        if (!stored.has(name) && change.key.startsWith(WORD)) words.push(Buffer.from(change.key.slice(WORD.length)));
        set.addMany(add);
        set.removeMany(remove);
        if (set.isEmpty) {
          if (stored.has(name)) emptied.push([k, block]);
          continue;
        }
        set.runOptimize();
        written.push({ k, block, bits: Buffer.from(set.serialize('portable')) });
      }
    }
    for (let w = 0; w < written.length; w += BATCH)
      await trx(t.sets)
        .insert(written.slice(w, w + BATCH))
        .onConflict(['k', 'block'])
        .merge(['bits']);
    for (const [k, block] of emptied) await trx(t.sets).where({ k, block }).delete();
  }
  if (words.length) await appendWords(trx, table, words);
}

/**
 * Makes the caller's transaction the only one changing the table's sets until it ends: it changes
 * the vocabulary's first row, so on MySQL another waits for it to commit, on SQLite it takes the
 * write lock, and on Galera, where locks are a node's own, the second of two at once fails
 * certification and is retried. So new words commit in their numbers' order (a reader reads only
 * words numbered past the last it read), and the pairable words never change under a batch.
 * First in a transaction: nothing read before it, which a later commit could make stale.
 */
export async function lockSets(trx: Knex.Transaction, table: string): Promise<void> {
  await trx(setTables(table).words)
    .where('seq', 1)
    .update({ changes: trx.raw('changes + 1') });
}

/** Numbers new words (lockSets: after every word committed before them). */
async function appendWords(trx: Knex.Transaction, table: string, words: readonly Buffer[]): Promise<void> {
  const t = setTables(table);
  // A word already known (in another block) is not numbered again.
  const fresh = [...new Set(words.map((w) => w.toString()))].map((w) => ({ word: Buffer.from(w) }));
  for (let w = 0; w < fresh.length; w += BATCH)
    await trx(t.words)
      .insert(fresh.slice(w, w + BATCH))
      .onConflict('word')
      .ignore();
}

/** The ids of a change split by block, each part sorted. */
function byBlock(add: ArrayLike<number>, remove: ArrayLike<number>): [number, Uint32Array, Uint32Array][] {
  const parts = new Map<number, { add: number[]; remove: number[] }>();
  const part = (id: number) => {
    const block = Math.floor(id / BLOCK_SIZE);
    let p = parts.get(block);
    if (!p) parts.set(block, (p = { add: [], remove: [] }));
    return p;
  };
  for (let i = 0; i < add.length; i++) part(add[i]).add.push(add[i]);
  for (let i = 0; i < remove.length; i++) part(remove[i]).remove.push(remove[i]);
  return [...parts].map(([block, p]) => [block, Uint32Array.from(p.add), Uint32Array.from(p.remove)]);
}

/** The words that have pair sets: chosen by whoever fills the index, read by every planner. */
export async function setPairable(trx: Knex.Transaction, table: string, words: readonly string[]): Promise<void> {
  const t = setTables(table);
  await trx(t.pairable).delete();
  for (let i = 0; i < words.length; i += BATCH)
    await trx(t.pairable).insert(words.slice(i, i + BATCH).map((w) => ({ word: Buffer.from(w) })));
}

export async function readPairable(db: Knex | Knex.Transaction, table: string): Promise<Set<string>> {
  const rows: { word: Buffer }[] = await db(setTables(table).pairable).select('word');
  return new Set(rows.map((r) => r.word.toString()));
}

/** Per pool and table: the vocabulary read so far, its instance, and the last number read. */
interface KnownWords {
  mark: string;
  seq: number;
  words: Vocabulary;
}
const known = new WeakMap<object, Map<string, KnownWords>>();

/**
 * Reads one table's sets through `db` (a transaction, for one snapshot). The vocabulary is kept
 * per `cacheKey` (the pool) and only the words numbered since are read: words are only added.
 */
export function setReader(db: Knex | Knex.Transaction, table: string, cacheKey: object = db): SetReader {
  const t = setTables(table);
  const read = async (query: Knex.QueryBuilder) =>
    RoaringBitmap32.orMany(((await query) as { bits: Buffer }[]).map((r) => RoaringBitmap32.deserialize(r.bits, 'portable')));
  return {
    async union(keys) {
      const parts: RoaringBitmap32[] = [];
      for (let i = 0; i < keys.length; i += BATCH)
        parts.push(
          await read(
            db(t.sets)
              .select('bits')
              .whereIn(
                'k',
                keys.slice(i, i + BATCH).map((k) => Buffer.from(k)),
              ),
          ),
        );
      return RoaringBitmap32.orMany(parts);
    },
    async unionPrefixed(prefixes) {
      const parts: RoaringBitmap32[] = [];
      for (let i = 0; i < prefixes.length; i += BATCH) {
        const query = db(t.sets).select('bits');
        for (const prefix of prefixes.slice(i, i + BATCH)) {
          const low = Buffer.from(prefix);
          // 0xFF is never a byte of UTF-8: every key that starts with the prefix sorts below it.
          void query.orWhere((q) => {
            void q.where('k', '>=', low).andWhere('k', '<', Buffer.concat([low, Buffer.from([0xff])]));
          });
        }
        parts.push(await read(query));
      }
      return RoaringBitmap32.orMany(parts);
    },
    async vocabulary() {
      let tables = known.get(cacheKey);
      if (!tables) known.set(cacheKey, (tables = new Map<string, KnownWords>()));
      let mine = tables.get(table) ?? { mark: '', seq: 1, words: Vocabulary.of([]) };
      const read = (after: number) =>
        db(t.words).select('seq', 'word').where('seq', '>', after).orWhere('seq', 1).orderBy('seq') as Promise<
          { seq: number; word: Buffer }[]
        >;
      let rows = await read(mine.seq);
      const mark = rows[0]?.word.toString() ?? '';
      if (mark !== mine.mark) {
        mine = { mark, seq: 1, words: Vocabulary.of([]) };
        rows = await read(1);
      }
      const fresh = rows.filter((r) => Number(r.seq) > mine.seq);
      if (!fresh.length) return mine.words;
      // A new object, so that a reader in the middle of a search keeps the list it had.
      const next: KnownWords = {
        mark,
        seq: Number(fresh[fresh.length - 1].seq),
        words: mine.words.with(fresh.map((r) => r.word.toString())),
      };
      tables.set(table, next);
      return next.words;
    },
    pairable: () => readPairable(db, table),
  };
}
