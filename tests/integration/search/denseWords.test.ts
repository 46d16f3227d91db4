import { startTestApp, type TestApp } from '../../helpers/app';
import { dialect } from '../../helpers/db';
import { fixtures, type Fixture } from '../../helpers/fixtures';
import { scannedIds } from '../../helpers/scan';
import { chooseDenseWords } from '../../../src/search/mysql/denseWords';
import { parseSearch } from '../../../src/search/predicate';
import { planSearch } from '../../../src/search/plan';
import { createSearch, defaultTuning, type SearchTuning } from '../../../src/search';
import { indexPending, wordTables } from '../../../src/search/mysql/wordIndex';

// MySQL: a term in most records is counted from the dense words' lists (src/search/mysql/denseWords.ts).
// Counts and pages must stay the scan's: with records pending and indexed, after creates, changes
// of text and deletes, and once the words are no longer dense. On tables this small the tuning
// is moved so that terms are common and words dense.

let app: TestApp;
/** What the choices and plans below run with; tests move it and put it back. */
const tuning: SearchTuning = { ...defaultTuning, sample: 10, denseShare: 0.75 };
beforeAll(async () => {
  app = await startTestApp({ search: createSearch(tuning) });
});
afterAll(async () => {
  await app.close();
});

type Rec = Record<string, any> & { id: number };

/** Most records hold the word `the`; some hold it only inside a word, some not at all. */
function text(i: number): string {
  if (i % 8 === 0) return `Theory ${i} alone`;
  if (i % 8 === 4) return `nothing ${i} here`;
  return `the quick ${i} and THE slow`;
}

function body(f: Fixture, n: number, first: string): Record<string, unknown> {
  const base = f.valid(n);
  // Users' search fields are unique single tokens: no word of theirs can be dense.
  if (f.name === 'users') return { ...base, username: `${first.split(' ')[0]}.${n}` };
  return { ...base, [f.searchFields[0]]: first, [f.searchFields[1]]: 'plain' };
}

const SEARCHES = ['the', 'THE', 'he', 'h', 'the quick', 'the and', '"the quick"', 'theory', 'e', 'the plain', 'nothing'];

let serial = 0;

describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (_name, f) => {
  const db = () => app.database.db;
  const t = wordTables(f.name);
  const spec = { table: f.name, searchFields: f.searchFields };

  async function create(first: string): Promise<Rec> {
    const res = await app.request('POST', `/api/${f.name}/`, { body: body(f, ++serial, first) });
    expect(res.status).toBe(201);
    return res.body;
  }

  async function pages(search: string): Promise<{ count: number; ids: number[] }> {
    const ids: number[] = [];
    for (let page = 1; ; page++) {
      const res = await app.request('GET', `/api/${f.name}/?search=${encodeURIComponent(search)}&page=${page}&page_size=7`);
      expect(res.status).toBe(200);
      ids.push(...res.body.results.map((r: Rec) => r.id));
      if (!res.body.next) return { count: res.body.count, ids };
    }
  }

  async function expectScan(searches: readonly string[]): Promise<void> {
    for (const s of searches) {
      const want = await scannedIds(db(), f.name, f.searchFields, parseSearch(s));
      expect([s, await pages(s)]).toEqual([s, { count: want.length, ids: want }]);
    }
  }

  const theWord = async () => (await db()(t.words).where({ word: 'the' }).pluck('id')).map(Number);
  const listed = async (id: number) => (await db()(t.without).where({ id }).pluck('word_id')).map(Number);

  beforeAll(async () => {
    if (dialect !== 'mysql') return;
    for (let i = 1; i <= 24; i++) await create(text(i));
    await indexPending(db(), f.name);
  });

  (dialect === 'mysql' ? test : test.skip)('the words in most records are made dense, and counts are read from their lists', async () => {
    const { filled } = await chooseDenseWords(db(), f.name, tuning);
    const dense = (await db()(t.dense).where({ ready: 1 }).pluck('word_id')).map(Number);
    expect(dense).toHaveLength(filled);
    const plan = await planSearch(db(), spec, ['the'], tuning);
    if (f.name === 'users') {
      expect(filled).toBe(0);
      expect(plan.count).toBeUndefined();
    } else {
      // `the` is in 18 of the 24 records: dense; `THE` is another raw token in as many.
      expect(dense).toEqual(expect.arrayContaining(await theWord()));
      expect(plan.count).toBeDefined();
      // A phrase may hold dense words apart: never counted from the lists.
      expect((await planSearch(db(), spec, ['the quick'], tuning)).count).toBeUndefined();
      // Each record lacking a dense word is listed under it, and no other.
      const [word] = await theWord();
      for (const rec of await db()(f.name).select('id', f.searchFields[0])) {
        expect([rec.id, (await listed(Number(rec.id))).includes(word)]).toEqual([rec.id, !/(^| )the( |$)/.test(rec[f.searchFields[0]])]);
      }
    }
    await expectScan(SEARCHES);
  });

  (dialect === 'mysql' ? test : test.skip)('creates, changes of text and deletes keep counts exact, pending and indexed', async () => {
    const [a] = f.searchFields;
    const without = await create('nothing new');
    const withIt = await create('the newest');
    await expectScan(['the', 'he']);
    await indexPending(db(), f.name);
    const [word] = await theWord();
    if (f.name !== 'users') {
      expect(await listed(without.id)).toContain(word);
      expect(await listed(withIt.id)).not.toContain(word);
    }
    await expectScan(['the', 'he']);

    const value = (first: string) => (f.name === 'users' ? `${first.split(' ')[0]}.${++serial}` : first);
    expect((await app.request('PATCH', `/api/${f.name}/${withIt.id}/`, { body: { [a]: value('gone') } })).status).toBe(200);
    await expectScan(['the', 'he']);
    await indexPending(db(), f.name);
    if (f.name !== 'users') expect(await listed(withIt.id)).toContain(word);
    await expectScan(['the', 'he']);

    expect((await app.request('PATCH', `/api/${f.name}/${without.id}/`, { body: { [a]: value('the again') } })).status).toBe(200);
    await indexPending(db(), f.name);
    expect(await listed(without.id)).not.toContain(word);
    await expectScan(['the', 'he']);

    expect((await app.request('DELETE', `/api/${f.name}/${withIt.id}/`)).status).toBe(204);
    await expectScan(['the', 'he']);
    await indexPending(db(), f.name);
    expect(await listed(withIt.id)).toEqual([]);
    await expectScan(SEARCHES);
  });

  (dialect === 'mysql' ? test : test.skip)('words no longer dense are dropped with their lists; counts stay exact', async () => {
    // Above any share, less the margin a dense word keeps.
    Object.assign(tuning, { denseShare: 2 });
    try {
      const before = (await db()(t.dense).count({ n: '*' }))[0].n;
      expect(await chooseDenseWords(db(), f.name, tuning)).toEqual({ filled: 0, dropped: Number(before) });
      expect(await db()(t.dense).count({ n: '*' })).toEqual([{ n: 0 }]);
      expect(await db()(t.without).count({ n: '*' })).toEqual([{ n: 0 }]);
      expect((await planSearch(db(), spec, ['the'], tuning)).count).toBeUndefined();
      await expectScan(SEARCHES);
    } finally {
      Object.assign(tuning, { denseShare: 0.75 });
    }
  });
});
