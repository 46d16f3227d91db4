// The floor of a search index of sets (the issue "Search as people type"): the sets of N corpus
// posts (corpus.ts) are cut in process, stored one row per key and block of 65,536 ids on MySQL
// and SQLite, and a typing client's look-ups are timed against each store. No service, no
// pending writes: what the storage alone costs the design.
//   npx tsx scripts/bench/setsFloor.ts [posts=1000000] [mysql-url] [sqlite-file]
import { statSync, rmSync } from 'node:fs';
import knex, { type Knex } from 'knex';
import { RoaringBitmap32 } from 'roaring';
import { corpusPosts } from './corpus';
import { searchFold } from '../../src/search/fold';
import { parseSearch } from '../../src/search/predicate';
import { GRAM, KeyGatherer, MAX_GRAM, PAIR, pairKey, WORD, WORD_BREAK, wordsOf } from '../../src/search/sets/keys';

const N = Number(process.argv[2] ?? 1_000_000);
const MYSQL = process.argv[3] ?? 'mysql://root@127.0.0.1:3306/sets_floor';
const SQLITE = process.argv[4] ?? 'build/sets-floor.sqlite3';
const BLOCK = 65_536;
const PAIRABLE = 64;

const posts = corpusPosts(N);
const vocabulary = posts.words;
const accented = vocabulary.slice(2000).find((w) => /[éèêàôîûë]/.test(w) && w.length >= 6)!;
const typed = [vocabulary[25000], vocabulary[1500], 'where', accented, `where ${vocabulary[800]}`];
const keystrokes = typed.flatMap((word) => Array.from({ length: word.length }, (_, i) => word.slice(0, i + 1)));
const phrases = ['"and the"', '"e b"'];
const searches = [...new Set([...keystrokes, ...phrases])];

function ms(since: bigint): number {
  return Number(process.hrtime.bigint() - since) / 1e6;
}

async function main(): Promise<void> {
  const fields = (i: number) => {
    const row = posts.row(i);
    return [searchFold(row[0] as string), searchFold(row[1] as string)];
  };
  // The pairable words: the most common in a sample, as a live index would choose and store them.
  const df = new Map<string, number>();
  for (let i = 0; i < Math.min(N, 20_000); i++)
    for (const f of fields(i)) for (const w of new Set(wordsOf(f).map((x) => x.word))) df.set(w, (df.get(w) ?? 0) + 1);
  const pairable = new Set(
    [...df]
      .sort((a, b) => b[1] - a[1])
      .slice(0, PAIRABLE)
      .map(([w]) => w),
  );

  const my = knex({ client: 'mysql2', connection: MYSQL.replace(/\/sets_floor$/, '/'), pool: { min: 1, max: 2 } });
  await my.raw('CREATE DATABASE IF NOT EXISTS sets_floor');
  await my.destroy();
  const mysql = knex({ client: 'mysql2', connection: MYSQL, pool: { min: 1, max: 2 } });
  rmSync(SQLITE, { force: true });
  const sqlite = knex({ client: 'better-sqlite3', connection: { filename: SQLITE }, useNullAsDefault: true });
  await sqlite.raw('PRAGMA journal_mode = WAL');
  await mysql.raw('DROP TABLE IF EXISTS sets');
  await mysql.raw(
    'CREATE TABLE sets (k VARBINARY(1700) NOT NULL, block INT NOT NULL, bits MEDIUMBLOB NOT NULL, PRIMARY KEY (k, block)) ENGINE=InnoDB ROW_FORMAT=DYNAMIC',
  );
  await sqlite.raw('CREATE TABLE sets (k BLOB NOT NULL, block INTEGER NOT NULL, bits BLOB NOT NULL, PRIMARY KEY (k, block)) WITHOUT ROWID');

  const truth = new Map<string, number>(searches.map((s) => [s, 0]));
  const terms = new Map(searches.map((s) => [s, parseSearch(s).map(searchFold)]));
  let cutMs = 0;
  let storeMy = 0;
  let storeLite = 0;
  let keyRows = 0;
  let bytes = 0;
  const byKind = { [GRAM]: 0, [WORD]: 0, [PAIR]: 0 } as Record<string, number>;
  const started = process.hrtime.bigint();
  for (let first = 1; first <= N; first += BLOCK) {
    const last = Math.min(N, first + BLOCK - 1);
    const t0 = process.hrtime.bigint();
    const gatherer = new KeyGatherer((w) => pairable.has(w));
    let truthMs = 0;
    for (let id = first; id <= last; id++) {
      const f = fields(id - 1);
      gatherer.add(id, f);
      const t2 = process.hrtime.bigint();
      for (const [s, ts] of terms) if (ts.every((t) => f.some((x) => x.includes(t)))) truth.set(s, truth.get(s)! + 1);
      truthMs += ms(t2);
    }
    cutMs -= truthMs;
    const rows: { k: Buffer; block: number; bits: Buffer }[] = [];
    const block = Math.floor(first / BLOCK);
    for (const [k, list] of gatherer.drain()) {
      const set = RoaringBitmap32.from(list);
      set.runOptimize();
      const bits = Buffer.from(set.serialize('portable'));
      rows.push({ k: Buffer.from(k), block, bits });
      bytes += bits.length;
      byKind[k[0]] += bits.length;
    }
    keyRows += rows.length;
    cutMs += ms(t0);
    let t1 = process.hrtime.bigint();
    for (let i = 0; i < rows.length; i += 500) await mysql('sets').insert(rows.slice(i, i + 500));
    storeMy += ms(t1);
    t1 = process.hrtime.bigint();
    await sqlite.transaction(async (trx) => {
      for (let i = 0; i < rows.length; i += 300) await trx('sets').insert(rows.slice(i, i + 300));
    });
    storeLite += ms(t1);
    console.log(`${last.toLocaleString('en')} posts: ${(ms(started) / 1000).toFixed(0)} s`);
  }
  await mysql.raw('ANALYZE TABLE sets');
  const [[size]] = (await mysql.raw(
    "SELECT data_length + index_length AS b FROM information_schema.tables WHERE table_schema = 'sets_floor' AND table_name = 'sets'",
  )) as [{ b: number }[]];
  await sqlite.raw('PRAGMA wal_checkpoint(TRUNCATE)');
  console.log(`\n${N.toLocaleString('en')} posts, grams of 1-${MAX_GRAM}, words, pairs of the ${PAIRABLE} commonest words`);
  console.log(
    `cut + serialize: ${(cutMs / 1000).toFixed(0)} s; store: MySQL ${(storeMy / 1000).toFixed(0)} s, SQLite ${(storeLite / 1000).toFixed(0)} s`,
  );
  console.log(
    `rows ${keyRows.toLocaleString('en')}; sets ${(bytes / 1e6).toFixed(0)} MB (grams ${(byKind[GRAM] / 1e6).toFixed(0)}, words ${(byKind[WORD] / 1e6).toFixed(0)}, pairs ${(byKind[PAIR] / 1e6).toFixed(0)}); MySQL table ${(size.b / 1e6).toFixed(0)} MB; SQLite file ${(statSync(SQLITE).size / 1e6).toFixed(0)} MB`,
  );

  for (const [name, db] of [
    ['MySQL', mysql],
    ['SQLite', sqlite],
  ] as const) {
    const words = (
      (await db('sets').distinct('k').where('k', '>=', Buffer.from(WORD)).andWhere('k', '<', Buffer.from('x'))) as { k: Buffer }[]
    ).map((r) => r.k.toString().slice(1));
    console.log(`\n${name}: vocabulary ${words.length.toLocaleString('en')} words`);
    console.log('| search | count | scan count | keys | ms (best of 3) |\n|---|--:|--:|--:|--:|');
    const lookups: number[] = [];
    for (const s of searches) {
      let best = Infinity;
      let count = 0;
      let keyCount = 0;
      for (let r = 0; r < 3; r++) {
        const t = process.hrtime.bigint();
        const result = await lookUp(db, words, pairable, terms.get(s)!);
        best = Math.min(best, ms(t));
        count = result.set.size;
        keyCount = result.keys;
      }
      if (!s.startsWith('"')) lookups.push(best);
      console.log(`| \`${s}\` | ${count} | ${truth.get(s)} | ${keyCount} | ${best.toFixed(1)} |`);
    }
    lookups.sort((a, b) => a - b);
    console.log(
      `keystrokes: p50 ${lookups[Math.floor(lookups.length / 2)].toFixed(1)} ms, max ${lookups[lookups.length - 1].toFixed(1)} ms`,
    );
  }
  await mysql.destroy();
  await sqlite.destroy();
}

/** One search's ids from the sets alone: grams for short terms, the vocabulary for words, pairs for phrases. */
async function lookUp(db: Knex, words: string[], pairable: Set<string>, terms: string[]): Promise<{ set: RoaringBitmap32; keys: number }> {
  let result: RoaringBitmap32 | undefined;
  let keys = 0;
  for (const term of terms) {
    let set: RoaringBitmap32;
    if ([...term].length <= MAX_GRAM) {
      keys++;
      set = await union(db, [GRAM + term]);
    } else if (!WORD_BREAK.test(term)) {
      const inside = words.filter((w) => w.includes(term)).map((w) => WORD + w);
      keys += inside.length;
      set = await union(db, inside);
    } else {
      // A phrase of two pieces: a word ending in the first, what separates, a word starting with the second.
      const m = /^([\p{L}\p{M}\p{N}]+)([^\p{L}\p{M}\p{N}]+)([\p{L}\p{M}\p{N}]+)$/u.exec(term);
      if (!m) throw new Error(`not measured: ${term}`);
      const [, head, between, tail] = m;
      const firsts = words.filter((w) => w.endsWith(head) && pairable.has(w));
      const rows = (await db('sets')
        .select('block', 'bits')
        .where((q) => {
          for (const w of firsts) {
            const prefix = Buffer.from(pairKey(w, between, tail));
            q.orWhere((r) => {
              void r.where('k', '>=', prefix).andWhere('k', '<', Buffer.concat([prefix, Buffer.from([0xff])]));
            });
          }
        })) as { block: number; bits: Buffer }[];
      keys += rows.length;
      set = RoaringBitmap32.orMany(rows.map((r) => RoaringBitmap32.deserialize(r.bits, 'portable')));
    }
    result = result ? RoaringBitmap32.and(result, set) : set;
  }
  return { set: result!, keys };
}

async function union(db: Knex, keys: string[]): Promise<RoaringBitmap32> {
  if (!keys.length) return new RoaringBitmap32();
  const sets: RoaringBitmap32[] = [];
  for (let i = 0; i < keys.length; i += 500) {
    const rows = (await db('sets')
      .select('bits')
      .whereIn(
        'k',
        keys.slice(i, i + 500).map((k) => Buffer.from(k)),
      )) as { bits: Buffer }[];
    for (const r of rows) sets.push(RoaringBitmap32.deserialize(r.bits, 'portable'));
  }
  return RoaringBitmap32.orMany(sets);
}

main().then(
  () => undefined,
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
