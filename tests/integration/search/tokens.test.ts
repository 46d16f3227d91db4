import { listRecords } from '../../../src/handlers/pages';
import { searchFold } from '../../../src/search/fold';
import { DEFAULT_ORDER } from '../../../src/db/order';
import { createSearch, defaultTuning, type SearchTuning, sqliteBulkIndex } from '../../../src/search';
import { planSearch } from '../../../src/search/plan';
import { applySearch } from '../../../src/search/predicate';
import {
  deadTokens,
  decidingTerms,
  pruneVocabulary,
  removeTokens,
  tokenEligible,
  tokenQuery,
  tokenTables,
} from '../../../src/search/sqlite/tokens';
import { OVERLAP, tokensOf } from '../../../src/search/tokenize';
import { dbTimestamp } from '../../../src/db/time';
import { connectionPool } from '../../../scripts/lib/pool';

/** What the searches below run with; tests move it and put it back. */
const tuning: SearchTuning = { ...defaultTuning };
import { createTestDatabase, useTestDatabase, dialect } from '../../helpers/db';

// SQLite's token index answers a term from the vocabulary's tokens that contain it, so its
// JavaScript cuts (the vocabulary, kept by triggers) must be FTS5's own (the index), and a term
// must never lie across two tokens. The scan (applySearch) is the judge.

describe('tokensOf', () => {
  test.each([
    ['a b,c\td\x01e\x7ff', ['a', 'b', 'c', 'd', 'e', 'f']],
    ['it\'s (x) [y] "z" a.b!?', ["it's", '(x)', '[y]', '"z"', 'a.b!?']],
    ['  ,, lead and trail ,  ', ['lead', 'and', 'trail']],
    ['no\u00a0break é\u2003em', ['no\u00a0break', 'é\u2003em']],
  ])('cuts %j', (text, want) => {
    expect(tokensOf(text)).toEqual(want);
  });

  test('a long run is cut into overlapping pieces that each hold every short term in them', () => {
    // 4-byte characters: a piece must stay under FTS5's 32,768 bytes of a token.
    const chars = Array.from({ length: 20_000 }, (_, i) => String.fromCodePoint(0x10400 + (i % 40)) + (i % 7 === 0 ? 'x' : ''));
    const word = chars.join('');
    const pieces = tokensOf(word);
    expect(pieces.length).toBeGreaterThan(2);
    for (const piece of pieces) expect(Buffer.byteLength(piece)).toBeLessThan(32_768);
    const all = [...word];
    for (let at = 0; at + OVERLAP <= all.length; at += 97) {
      const term = all.slice(at, at + OVERLAP).join('');
      expect(pieces.some((p) => p.includes(term))).toBe(true);
    }
  });

  test('the terms that decide: each once, none that another holds', () => {
    expect(decidingTerms(['abc', 'abc', 'xabcx', 'q', 'bc'])).toEqual(['xabcx', 'q']);
    expect(decidingTerms(Array.from({ length: 50 }, () => 'abc'))).toEqual(['abc']);
  });

  test.each([
    ['échaç', true],
    ["it's", true],
    ['a b', false],
    ['a,b', false],
    ['a\x01b', false],
    ['pq\ufffdr', false],
    ['x'.repeat(OVERLAP + 1), false],
  ])('whether %j is decided by the token index', (term, want) => {
    expect(tokenEligible(searchFold(term))).toBe(want);
  });
});

(dialect === 'sqlite' ? describe : describe.skip)('the token index on SQLite', () => {
  const t = useTestDatabase();
  const fields = ['title', 'content'];
  const { tokens, vocab, grams } = tokenTables('posts');

  const ascii = Array.from({ length: 0x7f }, (_, i) => String.fromCharCode(i + 1)).join('');
  const long = 'ab'.repeat(6_000) + 'NEEDLE' + 'é'.repeat(15_000) + 'Σ';
  const TEXTS = [
    `all of ASCII: ${ascii}`,
    'tab\there,comma\x01ctl "quoted" it\'s (paren) [x]',
    long,
    'ΟΔΟΣ ας σοφός İstanbul Straße',
    'party🎉 then 👍🏽ok 50%_off c\\d',
  ];

  const row = (title: string, content: string) => ({
    title: title.slice(0, 100),
    content,
    author: 'a',
    created_at: dbTimestamp(),
    updated_at: dbTimestamp(),
  });

  async function scan(search: string[]): Promise<number[]> {
    const q = t.db('posts').select('id').orderBy('id');
    applySearch(q, fields, search);
    return ((await q) as { id: number }[]).map((r) => Number(r.id));
  }

  async function byTokens(search: string[]): Promise<number[]> {
    const plan = await planSearch(t.db, { table: 'posts', searchFields: fields }, search, tuning);
    const q = t.db('posts').select('id').orderBy('id');
    plan.apply(q);
    const ids = ((await q) as { id: number }[]).map((r) => Number(r.id));
    expect(await plan.count!()).toBe(ids.length);
    // Several terms' few matches come with the count: every one of them, or none past the bound.
    const few = await plan.few?.();
    if (few) expect([...few].sort((a, b) => a - b)).toEqual(ids);
    else expect(plan.few && ids.length <= tuning.preloadedWithCount).toBeFalsy();
    return ids;
  }

  /** Every token of every row is in the vocabulary, and the vocabulary holds every token FTS5 has. */
  async function expectVocabularyWhole(): Promise<void> {
    const words = new Set((await t.db(vocab).pluck<string[]>('term')).map(String));
    const rows = await t.db('posts').select<Record<string, string>[]>(fields);
    for (const r of rows) for (const f of fields) for (const w of tokensOf(searchFold(r[f]))) expect(words.has(w)).toBe(true);
    await t.db.raw(`CREATE VIRTUAL TABLE temp.check_terms USING fts5vocab(main, '${tokens}', 'row')`);
    try {
      const indexed = await t.db.raw<{ term: string }[]>('SELECT term FROM temp.check_terms');
      expect(indexed.length).toBeGreaterThan(0);
      for (const { term } of indexed) expect(words.has(term)).toBe(true);
    } finally {
      await t.db.raw('DROP TABLE temp.check_terms');
    }
  }

  const SEARCHES = [
    ['here'],
    ['comma'],
    ["it's"],
    ['(paren)'],
    ['"quoted"'],
    ['needle'],
    ['babneedleé'],
    ['ééé', 'éééσ'],
    ['ΟΔΟΣ'],
    ['οδοσ'],
    ['σοφός'],
    ['i̇stanbul'],
    ['straße'],
    ['party🎉'],
    ['ty🎉'],
    ['👍🏽ok'],
    ['50%_off'],
    ['c\\d'],
    ['!"#$%&'],
    ['{|}~'],
    ['xyz'],
    ['ab'.repeat(100)],
    ['é'.repeat(150) + 'σ'],
  ];

  describe.each([
    ['by triggers', false],
    ['by a bulk load', true],
  ])('rows indexed %s', (_how, bulk) => {
    const defaults = { ...tuning };
    beforeAll(async () => {
      Object.assign(tuning, { tokenShare: 1 });
      await t.db('posts').delete();
      const values = TEXTS.flatMap((text, i) => [row(text, 'filler'), row('filler', text), row(text, TEXTS[(i + 2) % TEXTS.length])]);
      if (!bulk) {
        for (const v of values) await t.db('posts').insert(v);
        return;
      }
      // As the seed and the import load rows: the insert triggers dropped, the indexes filled after.
      const client = connectionPool<import('better-sqlite3').Database>(t.db);
      const conn = await client.acquireConnection();
      try {
        conn.prepare('BEGIN IMMEDIATE').run();
        const finish = sqliteBulkIndex(conn, 'posts', fields);
        const insert = conn.prepare('INSERT INTO posts (title, content, author, created_at, updated_at) VALUES (?, ?, ?, ?, ?)');
        for (const v of values) insert.run(v.title, v.content, v.author, v.created_at, v.updated_at);
        finish!();
        conn.prepare('COMMIT').run();
      } finally {
        await client.releaseConnection(conn);
      }
    });
    afterAll(() => void Object.assign(tuning, defaults));

    test('the vocabulary holds every token, as FTS5 cut them', () => expectVocabularyWhole());

    test.each(SEARCHES.map((s) => [s.join(' '), s] as const))('%j: the token index finds what the scan finds', async (_s, search) => {
      expect(search.every((s) => tokenEligible(searchFold(s)))).toBe(true);
      expect(await byTokens(search)).toEqual(await scan(search));
    });

    test('a term in no token matches nothing', async () => {
      expect(await byTokens(['zzqqzz'])).toEqual([]);
    });

    test("a term given fifty times, or with its pieces, makes one term's query", async () => {
      const one = await tokenQuery(t.db, 'posts', ['needle'], tuning);
      expect(one).toMatch(/needle/);
      expect(
        await tokenQuery(
          t.db,
          'posts',
          Array.from({ length: 50 }, () => 'needle'),
          tuning,
        ),
      ).toBe(one);
      expect(await tokenQuery(t.db, 'posts', ['eedl', 'needle', 'nee'], tuning)).toBe(one);
    });

    test('a query longer than tokenQueryChars is left to the trigram index, and stays exact', async () => {
      const chars = tuning.tokenQueryChars;
      tuning.tokenQueryChars = 10;
      try {
        expect(await tokenQuery(t.db, 'posts', ['needle'], tuning)).toBeUndefined();
        const plan = await planSearch(t.db, { table: 'posts', searchFields: fields }, ['needle'], tuning);
        const q = t.db('posts').select('id').orderBy('id');
        plan.apply(q);
        expect(q.toSQL().sql).not.toContain(tokens);
        expect(((await q) as { id: number }[]).map((r) => Number(r.id))).toEqual(await scan(['needle']));
      } finally {
        tuning.tokenQueryChars = chars;
      }
    });

    test("a token holding some of a term's trigrams but not the term is not one of its tokens", async () => {
      // The look-up narrows by the first, a middle and the last trigram; the term itself decides.
      const [id] = await t.db('posts').insert(row('qkw_fjx_zvb', 'x'));
      try {
        expect(await tokenQuery(t.db, 'posts', ['qkwfjxzvb'], tuning)).toBe('');
        expect(await tokenQuery(t.db, 'posts', ['w_fjx_z'], tuning)).toBe('("qkw_fjx_zvb")');
        // Under 3 characters there is no trigram to look up by: left to the other paths.
        expect(await tokenQuery(t.db, 'posts', ['qk'], tuning)).toBeUndefined();
        expect(await tokenQuery(t.db, 'posts', ['w_fjx_z', 'qk'], tuning)).toBeUndefined();
      } finally {
        await t.db('posts').where({ id }).delete();
      }
    });

    test('several terms in few records: the index is read once, for the count and the page', async () => {
      const statements: string[] = [];
      const log = (q: { sql: string }) => void statements.push(q.sql);
      t.db.on('query', log);
      try {
        const spec = { table: 'posts', searchFields: fields };
        const search = ['comma', 'quoted'];
        const want = await scan(search);
        expect(want.length).toBeGreaterThan(0);
        const got = await listRecords(
          t.db,
          spec,
          { terms: search, filters: [], order: DEFAULT_ORDER, page: 1, pageSize: 50 },
          createSearch(tuning),
        );
        expect('rows' in got && got.rows.map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual(want);
        expect(got.count).toBe(want.length);
        expect(statements.filter((sql) => sql.includes(tokens))).toHaveLength(1);
      } finally {
        t.db.off('query', log);
      }
    });

    test('the plan is the token index', async () => {
      const plan = await planSearch(t.db, { table: 'posts', searchFields: fields }, ['needle'], tuning);
      const q = t.db('posts').select('id');
      plan.apply(q);
      expect(q.toSQL().sql).toContain(tokens);
    });
  });

  // `where` is made of trigrams that `when`, `here` and `there` make common, but its own tokens'
  // lists are short: at 1,000,000 posts, 20 ms for its count against 140 ms by the trigram index.
  test('a term of common trigrams goes to the token index unless the term itself is common', async () => {
    // A database of its own: the sample of rarity is kept per pool for minutes.
    const own = await createTestDatabase();
    try {
      const texts = [...Array.from({ length: 19 }, () => 'when here there her'), 'where else'];
      for (const text of texts) await own.db('posts').insert(row(text, 'filler'));
      const sqlOf = async (term: string) => {
        const plan = await planSearch(own.db, { table: 'posts', searchFields: fields }, [term], { ...defaultTuning });
        const q = own.db('posts').select('id');
        plan.apply(q);
        expect(await plan.count!()).toBe(texts.filter((x) => x.includes(term)).length);
        return q.toSQL().sql;
      };
      expect(await sqlOf('where')).toContain(tokens);
      expect(await sqlOf('here')).not.toContain(tokens);
    } finally {
      await own.drop();
    }
  });

  test('updates and deletes keep it exact', async () => {
    const defaults = { ...tuning };
    Object.assign(tuning, { tokenShare: 1 });
    try {
      const [id] = await t.db('posts').insert(row('Zéphyrin', 'x'));
      expect(await byTokens(['zéphyr'])).toEqual([Number(id)]);
      await t.db('posts').where({ id }).update({ content: 'Ĳsselmeer' });
      expect(await byTokens(['zéphyr'])).toEqual([Number(id)]);
      await t.db('posts').where({ id }).update({ title: 'other' });
      expect(await byTokens(['zéphyr'])).toEqual([]);
      expect(await byTokens(['ĳssel'])).toEqual([Number(id)]);
      await t.db('posts').where({ id }).delete();
      expect(await byTokens(['ĳssel'])).toEqual([]);
      await expectVocabularyWhole();
    } finally {
      Object.assign(tuning, defaults);
    }
  });
  test('pruning takes out the tokens no record holds, and no other; search stays exact', async () => {
    const defaults = { ...tuning };
    Object.assign(tuning, { tokenShare: 1 });
    try {
      const [kept] = await t.db('posts').insert(row('Kept quokkaword', 'x'));
      const [gone] = await t.db('posts').insert(row('Gone wombatword', 'x'));
      const [changed] = await t.db('posts').insert(row('Was numbatword', 'x'));
      await t.db('posts').where({ id: gone }).delete();
      await t.db('posts').where({ id: changed }).update({ title: 'Now bilbyword' });
      const has = async (term: string) => (await t.db(vocab).where({ term }).first()) !== undefined;
      expect([await has('wombatword'), await has('numbatword')]).toEqual([true, true]);

      expect(await pruneVocabulary(t.db, 'posts')).toBeGreaterThanOrEqual(2);
      expect([await has('wombatword'), await has('numbatword')]).toEqual([false, false]);
      expect([await has('quokkaword'), await has('bilbyword')]).toEqual([true, true]);
      await expectVocabularyWhole();
      // The vocabulary's trigram index forgot them too: a term only they held is in no token.
      expect(await tokenQuery(t.db, 'posts', ['wombat'], tuning)).toBe('');
      const gramRows = (term: string) =>
        t
          .db(grams)
          .whereRaw('?? MATCH ?', [grams, `"${term}"`])
          .pluck('rowid');
      expect([await gramRows('wombatword'), await gramRows('numbatword')]).toEqual([[], []]);
      expect(await gramRows('quokkaword')).toHaveLength(1);
      expect(await byTokens(['quokka'])).toEqual([Number(kept)]);
      expect(await byTokens(['bilby'])).toEqual([Number(changed)]);
      for (const search of SEARCHES) expect(await byTokens(search)).toEqual(await scan(search));
      // A dead token written again between the read and the removal is kept (and found).
      await t.db('posts').where({ id: kept }).update({ content: 'echidnaword' });
      await t.db('posts').where({ id: kept }).update({ content: 'x' });
      const dead = await deadTokens(t.db, 'posts');
      expect(dead.map((e) => e.term)).toContain('echidnaword');
      const [again] = await t.db('posts').insert(row('Again echidnaword', 'x'));
      expect(await removeTokens(t.db, 'posts', dead)).toBe(dead.length - 1);
      expect(await has('echidnaword')).toBe(true);
      expect(await byTokens(['echidna'])).toEqual([Number(again)]);
      await expectVocabularyWhole();
      // Nothing more to take out; a token written after is kept and found.
      expect(await pruneVocabulary(t.db, 'posts')).toBe(0);
      const [later] = await t.db('posts').insert(row('Later wombatword', 'x'));
      expect(await byTokens(['wombat'])).toEqual([Number(later)]);
      await expectVocabularyWhole();
    } finally {
      Object.assign(tuning, defaults);
    }
  });
});
