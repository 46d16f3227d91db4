import { listRecords, seekRecords } from '../../../src/handlers/pages';
import { deleteRecord, insertRecord, updateRecord } from '../../../src/db/records';
import { createSearch } from '../../../src/search';
import { NEWEST_FIRST as order, scannedIds } from '../../helpers/scan';
import { dbTimestamp } from '../../../src/db/time';
import { emptyIndex, indexLoaded, searchSchema } from '../../../src/search';
import { decode } from '../../../src/search/mysql/postings';
import { codeWords } from '../../../src/search/mysql/postingsTable';
import { indexPending, wordTables } from '../../../src/search/mysql/wordIndex';
import { dialect, useTestDatabase } from '../../helpers/db';
import { fixtures } from '../../helpers/fixtures';

// MySQL's postings table holds, per word and block of 65,536 ids, the records whose docs row
// holds the word: exactly what the docs rows say, after every write the indexer handles, the
// migration's fill from the docs rows, and emptying the index.

const t = useTestDatabase();
const mysqlOnly = dialect === 'mysql' ? describe : describe.skip;

/** "word:id" for every posting the table holds, sorted. */
async function postings(table: string): Promise<string[]> {
  const rows = await t
    .db(wordTables(table).postings)
    .select<{ word_id: number; block: number; card: number; ids: Buffer }[]>('word_id', 'block', 'card', 'ids');
  const out: string[] = [];
  for (const r of rows) {
    const lows = decode({ card: Number(r.card), ids: r.ids });
    expect(lows.length).toBeGreaterThan(0); // an empty container is deleted, never kept
    for (const low of lows) out.push(`${r.word_id}:${Number(r.block) * 65_536 + low}`);
  }
  return out.sort();
}

/** The same from the docs rows: what the postings must hold. */
async function fromDocs(table: string): Promise<string[]> {
  const rows = await t.db(wordTables(table).docs).select<{ id: number | string; codes: string }[]>('id', 'codes');
  return rows.flatMap((r) => [...new Set(codeWords(r.codes))].map((w) => `${w}:${Number(r.id)}`)).sort();
}

mysqlOnly.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  let serial = 0;
  async function insert(text: string): Promise<number> {
    const at = dbTimestamp();
    const body = { ...f.defaults, ...f.valid(++serial + 1000 * fixtures.indexOf(f)), [f.searchFields[0]]: text };
    return Number((await insertRecord(t.db, name, { ...body, created_at: at, updated_at: at })).id);
  }
  const field = f.searchFields[0];

  test('the postings follow every create, update and delete once indexed, in any block', async () => {
    const ids = [await insert('alpha beta gamma'), await insert('beta  délta beta'), await insert('   ')];
    // Ids in a later block, and one in the block after it.
    await t.db.raw('ALTER TABLE ?? AUTO_INCREMENT = 131070', [name]);
    ids.push(await insert('alpha omega'), await insert('omega'), await insert('gamma alpha'));
    await indexPending(t.db, name);
    const first = await postings(name);
    expect(first.length).toBeGreaterThan(8);
    expect(first).toEqual(await fromDocs(name));

    await updateRecord(t.db, name, ids[0], { [field]: 'beta zeta' });
    await updateRecord(t.db, name, ids[4], { [field]: 'alpha omega psi' });
    await deleteRecord(t.db, name, ids[1]);
    await deleteRecord(t.db, name, ids[5]);
    // Pending: the postings still hold what the docs rows hold (the search checks pending records).
    expect(await postings(name)).toEqual(first);
    await indexPending(t.db, name, { batch: 2 });
    const after = await postings(name);
    expect(after).not.toEqual(first);
    expect(after).toEqual(await fromDocs(name));
    expect(await t.db(wordTables(name).pending).count({ n: '*' })).toEqual([{ n: 0 }]);
  });

  test('searches answer as the scan does, from the postings and from FULLTEXT, indexed or pending', async () => {
    const spec = { table: name, searchFields: f.searchFields };
    const terms = [['alpha'], ['OMEGA'], ['eta'], ['alpha', 'omega'], ['délta'], ['zzz'], ['beta', 'psi']];
    // Few matches preloaded, and (maxPreloaded 1) many walked along the order's index.
    const engines = [{}, { maxPreloaded: 1 }, { postingsInList: 0 }, { postings: 0 }].map((tuning) => createSearch(tuning));
    const check = async () => {
      for (const ts of terms)
        for (const [pageSize, page] of [
          [10, 1],
          [1, 2],
        ]) {
          const want = await scannedIds(t.db, name, f.searchFields, ts);
          for (const engine of engines) {
            const got = await listRecords(t.db, spec, { terms: ts, filters: [], order, page, pageSize }, engine);
            expect([ts, got.count]).toEqual([ts, want.length]);
            expect([ts, ('rows' in got ? got.rows : []).map((r) => Number(r.id))]).toEqual([
              ts,
              want.slice((page - 1) * pageSize, page * pageSize),
            ]);
          }
        }
      // Cursor pages of 2, forward from the start and back from the last: the same ids as the scan.
      for (const ts of terms) {
        const want = await scannedIds(t.db, name, f.searchFields, ts);
        for (const engine of engines) {
          const seen: number[] = [];
          let after: unknown[] | undefined;
          let last: Record<string, unknown> | undefined;
          for (let pages = 0; pages <= want.length; pages++) {
            const rows = await seekRecords(t.db, spec, { terms: ts, filters: [], order, after, backward: false, limit: 2 }, engine);
            seen.push(...rows.map((r) => Number(r.id)));
            if (rows.length < 2) break;
            last = rows[1];
            after = [last.created_at, last.id];
          }
          expect([ts, seen]).toEqual([ts, want]);
          if (want.length < 3) continue;
          const end = await t
            .db(name)
            .where('id', want[want.length - 1])
            .first('created_at', 'id');
          const back = await seekRecords(
            t.db,
            spec,
            { terms: ts, filters: [], order, after: [end.created_at, end.id], backward: true, limit: 2 },
            engine,
          );
          expect([ts, back.map((r) => Number(r.id))]).toEqual([ts, want.slice(-3, -1)]);
        }
      }
    };
    // Enough matches for cursor pages past a boundary, in both blocks' ids.
    for (const text of ['alpha omega one', 'eta alpha two', 'omega eta alpha three', 'beta psi alpha']) await insert(text);
    await indexPending(t.db, name);
    await check();
    const id = await insert('alpha omega eta');
    await check(); // pending
    await indexPending(t.db, name);
    await check();
    await updateRecord(t.db, name, id, { [field]: 'beta psi' });
    await check();
    await indexPending(t.db, name);
    await check();
    await deleteRecord(t.db, name, id);
    await check();
    await indexPending(t.db, name);
    await check();
  });

  test('the migration fills them from the docs rows; emptying the index empties them', async () => {
    const { postings: table } = wordTables(name);
    const before = await postings(name);
    expect(before.length).toBeGreaterThan(0);
    await t.db.schema.dropTable(table);
    await searchSchema.addPostings(t.db, name, wordTables(name).docs);
    expect(await postings(name)).toEqual(before);
    await emptyIndex(t.db, name);
    expect(await postings(name)).toEqual([]);
  });
});

mysqlOnly('a bulk load', () => {
  test('is indexed in batches larger than one INSERT of docs rows, postings included', async () => {
    // indexLoaded takes thousands of records a batch; their docs rows go in several statements.
    const at = dbTimestamp();
    const rows = Array.from({ length: 4500 }, (_, i) => ({
      title: `load ${i} word${i % 97}`,
      content: `bulk text ${i % 13} shared`,
      author: 'ada',
      created_at: at,
      updated_at: at,
    }));
    for (let i = 0; i < rows.length; i += 1000) await t.db('posts').insert(rows.slice(i, i + 1000));
    expect(await indexLoaded(t.db, 'posts')).toBe(4500);
    expect(await t.db(wordTables('posts').docs).count({ n: '*' })).toEqual([{ n: 4500 }]);
    expect(await postings('posts')).toEqual(await fromDocs('posts'));
    const spec = { table: 'posts', searchFields: ['title', 'content'] };
    const want = await scannedIds(t.db, 'posts', spec.searchFields, ['word42']);
    const got = await listRecords(t.db, spec, { terms: ['word42'], filters: [], order, page: 1, pageSize: 5 }, createSearch());
    expect(want.length).toBe(46); // i % 97 === 42 for i < 4500
    expect(got.count).toBe(want.length);
  });
});

mysqlOnly('a page of many matches, all old', () => {
  test('walks the order index past its first chunk, in list and cursor pages', async () => {
    // 150 old matches behind 450 newer records: the walk's first chunk (200 entries) finds none,
    // so the next starts from the last entry read. Not preloaded (maxPreloaded 1).
    const rows = Array.from({ length: 600 }, (_, i) => {
      const at = dbTimestamp(Date.UTC(2020, 0, 1) + Math.floor(i / 2) * 1000);
      return { title: i < 150 ? `needle ${i}` : `hay ${i}`, content: 'text', author: 'ada', created_at: at, updated_at: at };
    });
    await t.db('posts').insert(rows);
    await indexLoaded(t.db, 'posts');
    const spec = { table: 'posts', searchFields: ['title', 'content'] };
    const want = await scannedIds(t.db, 'posts', spec.searchFields, ['needle']);
    expect(want.length).toBe(150);
    const engine = createSearch({ maxPreloaded: 1 });
    for (const [page, pageSize] of [
      [1, 10],
      [3, 7],
    ]) {
      const got = await listRecords(t.db, spec, { terms: ['needle'], filters: [], order, page, pageSize }, engine);
      expect(got.count).toBe(150);
      expect('rows' in got && got.rows.map((r) => Number(r.id))).toEqual(want.slice((page - 1) * pageSize, page * pageSize));
    }
    // From a cursor among the newer records: the walk starts there, past ties of created_at.
    const from = await t.db('posts').where('title', 'hay 301').first('created_at', 'id');
    const got = await seekRecords(
      t.db,
      spec,
      { terms: ['needle'], filters: [], order, after: [from.created_at, from.id], backward: false, limit: 4 },
      engine,
    );
    expect(got.map((r) => Number(r.id))).toEqual(want.slice(0, 4));
  });
});
