import { startTestApp, type TestApp } from '../../helpers/app';
import { fixtures, type Fixture } from '../../helpers/fixtures';
import { applySearch, foldCollation, parseSearch } from '../../../src/search/predicate';
import { updateRecord } from '../../../src/db/records';
import { dbTimestamp } from '../../../src/db/time';
import { applyFilters, type Filter } from '../../../src/db/filters';
import type { OrderKey } from '../../../src/db/order';
import type { Row } from '../../../src/db/pages';
import type { SearchTuning } from '../../../src/search';
import { inSnapshot } from '../../../src/search/list';
import { indexPending, pendingTable } from '../../../src/search/sets/indexer';
import { matchingIds, type MatchStats } from '../../../src/search/sets/matches';
import { planTerms } from '../../../src/search/sets/plan';
import { setPairable, setReader } from '../../../src/search/sets/store';
import { tunableSearch } from '../../helpers/search';
import { pendingCount } from '../../helpers/scan';
import { dialect } from '../../helpers/db';

const engine = tunableSearch();

// Search served by the sets must answer exactly what the scan answers: the same records, in
// the same order, with the same count, through pages and cursors, whether the records are
// indexed or still pending. The scan here is the predicate alone (src/search/predicate.ts).

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ search: engine });
});
afterAll(() => app.close());

const perCollection = fixtures.map((f) => [f.name, f] as const);
type Rec = Record<string, any> & { id: number };

// Texts that exercise what the index could get wrong: words cut inside, accents, cases beyond
// ASCII (final sigma, outside the BMP, a capital that lowers to two code points), emoji,
// LIKE's wildcards, phrases that span words.
const TEXTS = [
  'Millimétrée ÉCOLE du soir',
  'ecole sans accent',
  'ΟΔΟΣ ας σοφός',
  'party🎉 then 👍🏽ok',
  '50% off a_b c\\d',
  'red shoes walk',
  'shoes red walk',
  'İstanbul Straße',
  'ⰀⰁⰂ 𐐀𐐁𐐂 glyphs',
  'plain words only here',
  // A Kelvin sign (U+212A), which folds to ASCII `k`; a long term's grams apart, which LIKE's
  // wildcards would join.
  '\u212aELVINOMETER code 50%_offz',
  'code 50%_o _offz MILLIMÉTRÉE',
  // Characters SQLite reads as U+FFFD (the fold keeps them apart).
  'pq\uffffr qzjvkw\ufffexyz',
  // Where words break (sets/keys.ts) and what separates them in a pair.
  'tab\there,comma\x01ctl "quoted" it\'s (paren) [x]',
];

/** Words whose adjacent pairs get sets of their own (set while the sets are empty). */
const PAIRABLE = ['red', 'shoes', 'walk', 'filler', 'then', 'ok', 'plain', 'words', 'only', 'here', 'du', 'soir', 'code', 'it', 's', 'x'];

const SEARCHES = [
  'illim',
  'ÉCOLE',
  'école',
  'ecole',
  'e',
  'É',
  'é',
  'ÉC',
  'Σ',
  'ς',
  'σ',
  'ΟΔΟΣ',
  'οδοσ',
  'ας σ',
  '"ας σ"',
  '🎉',
  '👍🏽',
  '🎉 then',
  '%',
  '50%',
  '_',
  'a_b',
  '\\',
  'c\\d',
  '"red shoes"',
  'red shoes',
  '"s red w"',
  '"ed sh"',
  'ed sh',
  '"d shoes w"',
  '"red shoes walk"',
  '"walk red"',
  'filler',
  'FILL',
  '"ler"',
  'filler walk',
  'ⰰⰱⰲ',
  '𐐨𐐩𐐪',
  'i̇st',
  'STRASSE',
  'straße',
  'xyz',
  'walk red',
  'WALK',
  'wa',
  'k',
  '"e du s"',
  '" shoes"',
  '"walk "',
  'here,only',
  '"only here"',
  'kelvinometer',
  'KELVINOMETER',
  '50%_off',
  'i̇stanbul',
  'millimétrée',
  'MILLIMÉTRÉE',
  'FILLER',
  'pq\ufffdr',
  'pq\uffffr',
  'qzjvkw\ufffdxyz',
  'qzjvkw\uffffxyz',
  'qzjvkw\ufffexyz',
  'comma',
  'comma\x01ctl',
  '"tab\there"',
  '"here,comma"',
  "it's",
  '"s (p"',
  '(paren)',
  '"quoted"',
  'nothing-holds-this',
];

// Every page strategy of list.ts on tables of a few rows: the matches sorted by the database
// through their ids, the order's index walked, a slice of the set (`id` orders, always), and
// every check or sort waiting for the limiter.
const TUNINGS: [string, Partial<SearchTuning>][] = [
  ['the defaults', {}],
  ['matches sorted through their ids', { walkPerMatch: 0 }],
  ['the order walked among few matches', { walkPerMatch: 1e9 }],
  ['the order walked and filters read whole', { inList: 0 }],
  ['lists of one id at most', { inList: 1, walkPerMatch: 0 }],
  ['every check and sort through the limiter', { checkedInline: 0, walkPerMatch: 0 }],
  ['every statement through the limiter, the order walked', { checkedInline: 0, inList: 0 }],
];
/** Words, grams of up to 3 characters, terms across words (pairs or not), none. */
const TUNED_SEARCHES = [
  'filler',
  'STRASSE',
  '"red shoes"',
  '"ed sh"',
  'filler walk',
  'illim',
  'ÉCOLE ed',
  'σ',
  'e',
  'xyz',
  'kelvinometer',
  '50%_off',
  'qzjvkw\ufffdxyz',
  "it's",
  'comma\x01ctl',
];

/** The orderings a tuned search is also paged in: ids (a slice), the index's, another. */
const ORDERINGS = ['id', '-id', 'updated_at', 'created_at'];

// Users hold few characters in their search fields; texts they cannot hold are bent to fit.
const USERNAME = /^[\p{L}\p{M}\p{Nd}@.+_-]+$/u;

function body(f: Fixture, n: number, first: string, second: string): Record<string, unknown> {
  const base = f.valid(n);
  const [a, b] = f.searchFields;
  if (f.name === 'users') {
    const u = first.replace(/ /g, '_');
    return { ...base, username: USERNAME.test(u) ? `${u}.${n}` : `user.${n}` };
  }
  return { ...base, [a]: first, [b]: second };
}

/** The order's keys for `ordering` (default newest first), ending with id as the API completes them. */
function orderOf(ordering?: string): OrderKey[] {
  if (!ordering)
    return [
      { column: 'created_at', desc: true },
      { column: 'id', desc: true },
    ];
  const desc = ordering.startsWith('-');
  const column = ordering.replace(/^-/, '');
  return column === 'id'
    ? [{ column, desc }]
    : [
        { column, desc },
        { column: 'id', desc },
      ];
}

async function scan(f: Fixture, search: string, ordering?: string, filters: readonly Filter[] = []): Promise<number[]> {
  return scanTerms(f, parseSearch(search), orderOf(ordering), filters);
}

async function scanTerms(f: Fixture, terms: readonly string[], order: readonly OrderKey[], filters: readonly Filter[]): Promise<number[]> {
  const db = app.database.db;
  const query = db(f.name);
  applySearch(query, f.searchFields, terms, await foldCollation(db));
  applyFilters(query, filters);
  const ids: (number | string)[] = await query
    .orderBy(order.map((k) => ({ column: k.column, order: k.desc ? 'desc' : 'asc' })))
    .pluck('id');
  return ids.map(Number);
}

const listUrl = (f: Fixture, search: string, ordering?: string) =>
  `/api/${f.name}/?search=${encodeURIComponent(search)}${ordering ? `&ordering=${ordering}` : ''}`;

async function pages(f: Fixture, search: string, ordering?: string): Promise<{ count: number; ids: number[] }> {
  const ids: number[] = [];
  let count: number;
  for (let page = 1; ; page++) {
    const res = await app.request('GET', `${listUrl(f, search, ordering)}&page=${page}&page_size=3`);
    expect(res.status).toBe(200);
    count = res.body.count;
    ids.push(...res.body.results.map((r: Rec) => r.id));
    if (!res.body.next) return { count, ids };
    if (page > 100) throw new Error('pages do not end');
  }
}

const local = (link: string) => link.replace(/^https?:\/\/[^/]+/, '');

/** The cursor pages forward to the end, then back from there by `previous`: the ids each way. */
async function cursors(f: Fixture, search: string, ordering?: string): Promise<{ forward: number[]; backward: number[] }> {
  const forward: number[] = [];
  let next: string | null = `${listUrl(f, search, ordering)}&cursor=&page_size=3`;
  let previous: string | null = null;
  let last: number[] = [];
  for (let n = 0; next; n++) {
    const res: { status: number; body: any } = await app.request('GET', local(next));
    expect(res.status).toBe(200);
    last = res.body.results.map((r: Rec) => r.id);
    forward.push(...last);
    ({ next, previous } = res.body);
    if (n > 100) throw new Error('cursor pages do not end');
  }
  const backward: number[] = [...last];
  for (let n = 0; previous; n++) {
    const res: { status: number; body: any } = await app.request('GET', local(previous));
    expect(res.status).toBe(200);
    backward.unshift(...res.body.results.map((r: Rec) => r.id));
    previous = res.body.previous;
    if (n > 100) throw new Error('cursor pages do not end');
  }
  return { forward, backward };
}

async function search(f: Fixture, text: string): Promise<number[]> {
  const res = await app.request('GET', `/api/${f.name}/?search=${encodeURIComponent(text)}&page_size=10`);
  expect(res.status).toBe(200);
  return res.body.results.map((r: Rec) => r.id);
}

/** Every page of a search with filters, from the engine itself: by offset, and by cursor each way. */
async function filteredPages(
  f: Fixture,
  terms: readonly string[],
  filters: readonly Filter[],
  order: readonly OrderKey[],
): Promise<{ count: number; ids: number[]; forward: number[]; backward: number[] }> {
  const db = app.database.db;
  const spec = { table: f.name, searchFields: f.searchFields };
  const size = 3;
  const ids: number[] = [];
  let count = -1;
  for (let page = 1; page < 100; page++) {
    const result = await engine.list(db, spec, { terms, filters, order, page, pageSize: size });
    count = result.count;
    if ('pastEnd' in result) {
      expect(page).toBeGreaterThan(1);
      break;
    }
    ids.push(...result.rows.map((r) => Number(r.id)));
    if (page * size >= count) break;
  }
  const boundary = (row: Row) => order.map((k) => row[k.column]);
  const seek = (backward: boolean, after?: unknown[]) => engine.seek(db, spec, { terms, filters, order, after, backward, limit: size });
  const forward: number[] = [];
  for (let rows = await seek(false); ; rows = await seek(false, boundary(rows[rows.length - 1]))) {
    forward.push(...rows.map((r) => Number(r.id)));
    if (rows.length < size || forward.length > 1000) break;
  }
  const backward: number[] = [];
  for (let rows = await seek(true); ; rows = await seek(true, boundary(rows[0]))) {
    backward.unshift(...rows.map((r) => Number(r.id)));
    if (rows.length < size || backward.length > 1000) break;
  }
  return { count, ids, forward, backward };
}

let serial = 0;
async function create(f: Fixture, values: Record<string, unknown>): Promise<Rec> {
  const res = await app.request('POST', `/api/${f.name}/`, { body: values });
  expect(res.status).toBe(201);
  return res.body;
}

/** Whether the sets (not the pending list) hold `id` under the folded term, as sure. */
async function setsHold(f: Fixture, term: string, id: number): Promise<boolean> {
  return (await planTerms(setReader(app.database.db, f.name), [term])).sure.has(id);
}

const pendingIds = async (f: Fixture) => ((await app.database.db(pendingTable(f.name)).pluck('id')) as (number | string)[]).map(Number);
const indexAll = (f: Fixture) => indexPending(app.database.db, f.name, f.searchFields);

describe.each(perCollection)('%s', (_name, f) => {
  const ids: number[] = [];
  beforeAll(async () => {
    const db = app.database.db;
    // Pairs are chosen while the sets are empty (choosePairable needs 1000 rows; these are few).
    await db.transaction((trx) => setPairable(trx, f.name, PAIRABLE));
    // Each text in the first field, then in the second, then both at once: a term may be
    // found in either field, and a phrase never spans the two. The first two rounds are
    // indexed; the third, and the changes after, wait in the pending list.
    for (let i = 0; i < TEXTS.length; i++) ids.push((await create(f, body(f, ++serial, TEXTS[i], 'filler'))).id);
    for (let i = 0; i < TEXTS.length; i++) ids.push((await create(f, body(f, ++serial, 'filler', TEXTS[i]))).id);
    expect(await indexAll(f)).toBe(2 * TEXTS.length);
    for (let i = 0; i < TEXTS.length; i++) {
      const other = TEXTS[(i + 3) % TEXTS.length];
      ids.push((await create(f, body(f, ++serial, TEXTS[i], other))).id);
    }
    // Indexed records changed, and one deleted: pending with the text the sets hold.
    const [a] = f.searchFields;
    for (const [k, text] of [
      [0, TEXTS[5]],
      [6, TEXTS[0]],
      [TEXTS.length + 2, 'walk red shoes'],
    ] as const) {
      const res = await app.request('PATCH', `/api/${f.name}/${ids[k]}/`, { body: { [a]: body(f, ++serial, text, 'x')[a] } });
      expect(res.status).toBe(200);
    }
    expect((await app.request('DELETE', `/api/${f.name}/${ids[5]}/`)).status).toBe(204);
    expect(await pendingCount(db, f.name)).toBe(TEXTS.length + 4);
  });

  describe('some records indexed, some pending', () => {
    test.each(SEARCHES.map((s) => [s] as const))('search %s: pages and count as the scan gives', async (s) => {
      const want = await scan(f, s);
      expect(await pages(f, s)).toEqual({ count: want.length, ids: want });
    });

    test.each(['illim', 'e', 'ÉCOLE ed', '"red shoes"', 'σ', 'walk'].map((s) => [s] as const))(
      'search %s: cursor pages forward and backward as the scan gives',
      async (s) => {
        const want = await scan(f, s);
        expect(await cursors(f, s)).toEqual({ forward: want, backward: want });
      },
    );

    describe.each(TUNINGS)('with %s', (_what, tuning) => {
      beforeAll(() => engine.tune(tuning));
      afterAll(() => engine.reset());

      test.each(TUNED_SEARCHES.map((s, i) => [s, ORDERINGS[i % ORDERINGS.length]] as const))(
        'search %s: pages, count and cursor pages as the scan gives, newest first and by %s',
        async (s, ordering) => {
          const want = await scan(f, s);
          expect(await pages(f, s)).toEqual({ count: want.length, ids: want });
          expect(await cursors(f, s)).toEqual({ forward: want, backward: want });
          const other = await scan(f, s, ordering);
          expect(await pages(f, s, ordering)).toEqual({ count: other.length, ids: other });
          expect(await cursors(f, s, ordering)).toEqual({ forward: other, backward: other });
        },
      );

      // Filters that keep few of the matches (checked by id) and most of them.
      test.each(['filler', 'e', '"red shoes"', 'walk red'].map((s) => [s] as const))(
        'search %s with filters keeping few, most and none: pages and cursors as the scan gives',
        async (s) => {
          const high = ids[ids.length - 1];
          const cases: Filter[][] = [
            [{ column: 'id', op: 'gte', value: high - 4 }],
            [{ column: 'id', op: 'gte', value: ids[1] }],
            [
              { column: 'id', op: 'gte', value: ids[3] },
              { column: 'id', op: 'lte', value: high - 2 },
            ],
            [{ column: 'id', op: 'lte', value: 0 }],
          ];
          for (const filters of cases)
            for (const ordering of [undefined, 'id', '-id', 'updated_at']) {
              const order = orderOf(ordering);
              const want = await scanTerms(f, parseSearch(s), order, filters);
              expect({ filters, ordering, ...(await filteredPages(f, parseSearch(s), filters, order)) }).toEqual({
                filters,
                ordering,
                count: want.length,
                ids: want,
                forward: want,
                backward: want,
              });
            }
        },
      );
    });
  });

  describe('every record indexed', () => {
    beforeAll(async () => {
      await indexAll(f);
    });

    test('nothing is pending, and the sets decide the searches', async () => {
      expect(await pendingCount(app.database.db, f.name)).toBe(0);
      for (const s of ['filler', 'e', 'σ', 'walk', 'illim']) {
        const stats: MatchStats = { sure: 0, checked: 0, pending: 0 };
        const terms = parseSearch(s);
        const found = await inSnapshot(app.database.db, (db) => matchingIds(db, f.name, f.searchFields, terms, { stats }));
        const want = await scan(f, s);
        expect({ s, ids: found.toArray() }).toEqual({ s, ids: [...want].sort((x, y) => x - y) });
        // Grams of up to 3 characters and whole words need no row checked.
        expect({ s, stats }).toEqual({ s, stats: { sure: want.length, checked: 0, pending: 0 } });
      }
    });

    test.each(SEARCHES.map((s) => [s] as const))('search %s: pages and count as the scan gives', async (s) => {
      const want = await scan(f, s);
      expect(await pages(f, s)).toEqual({ count: want.length, ids: want });
    });

    test.each(['illim', 'e', '"red shoes"', '"ed sh"', 'walk'].map((s) => [s] as const))(
      'search %s: cursor pages forward and backward as the scan gives',
      async (s) => {
        const want = await scan(f, s);
        expect(await cursors(f, s)).toEqual({ forward: want, backward: want });
      },
    );
  });

  test('read-your-writes: found after create, PUT and PATCH, never after delete, before and after indexing', async () => {
    const [a] = f.searchFields;
    await indexAll(f);
    const first = f.name === 'users' ? 'ŒUVRE' : 'grande ŒUVRE';
    const rec = await create(f, body(f, ++serial, first, 'x'));
    // Before any indexer runs: the record is pending, found by the scan's predicate.
    expect(await pendingIds(f)).toEqual([rec.id]);
    expect(await search(f, 'œuvre')).toEqual([rec.id]);
    expect(await indexAll(f)).toBe(1);
    expect(await setsHold(f, 'œuvre', rec.id)).toBe(true);
    expect(await search(f, 'œuvre')).toEqual([rec.id]);

    const put = await app.request('PUT', `/api/${f.name}/${rec.id}/`, { body: body(f, ++serial, 'Zéphyrin', 'x') });
    expect(put.status).toBe(200);
    // The sets still hold the old text: the pending record is checked instead.
    expect(await setsHold(f, 'œuvre', rec.id)).toBe(true);
    expect(await search(f, 'œuvre')).toEqual([]);
    expect(await search(f, 'ZÉPHYR')).toEqual([rec.id]);
    expect(await indexAll(f)).toBe(1);
    expect(await setsHold(f, 'œuvre', rec.id)).toBe(false);
    expect(await search(f, 'œuvre')).toEqual([]);
    expect(await search(f, 'ZÉPHYR')).toEqual([rec.id]);

    const patched = f.name === 'users' ? `ĳsselmeer.${++serial}` : 'ĳsselmeer';
    const patch = await app.request('PATCH', `/api/${f.name}/${rec.id}/`, { body: { [a]: patched } });
    expect(patch.status).toBe(200);
    expect(await search(f, 'zéphyr')).toEqual([]);
    expect(await search(f, 'ĲSSEL')).toEqual([rec.id]);
    await indexAll(f);
    expect(await search(f, 'zéphyr')).toEqual([]);
    expect(await search(f, 'ĲSSEL')).toEqual([rec.id]);

    // A PATCH of another field leaves the text, and what finds it, as it was; nothing pending.
    const other = await app.request('PATCH', `/api/${f.name}/${rec.id}/`, {
      body: f.unsearchedText ? { [f.unsearchedText]: 'other' } : {},
    });
    expect(other.status).toBe(200);
    expect(await pendingIds(f)).toEqual([]);
    expect(await search(f, 'ĳssel')).toEqual([rec.id]);

    expect((await app.request('DELETE', `/api/${f.name}/${rec.id}/`)).status).toBe(204);
    expect(await setsHold(f, 'ĳssel', rec.id)).toBe(true);
    expect(await search(f, 'ĳssel')).toEqual([]);
    expect(await indexAll(f)).toBe(1);
    expect(await setsHold(f, 'ĳssel', rec.id)).toBe(false);
    expect(await search(f, 'ĳssel')).toEqual([]);
  });

  // As the README and the spec say: one letter folds by the database's own mapping.
  test('İ folds to i̇ on SQLite and to i on MySQL, pending and indexed', async () => {
    const rec = await create(f, body(f, ++serial, 'İzmirli', 'x'));
    const pending = { plain: await search(f, 'izmirli'), dotted: await search(f, 'i̇zmirli') };
    await indexAll(f);
    const indexed = { plain: await search(f, 'izmirli'), dotted: await search(f, 'i̇zmirli') };
    expect((await app.request('DELETE', `/api/${f.name}/${rec.id}/`)).status).toBe(204);
    const want = dialect === 'mysql' ? { plain: [rec.id], dotted: [] } : { plain: [], dotted: [rec.id] };
    expect({ pending, indexed }).toEqual({ pending: want, indexed: want });
  });

  test('rows written by SQL around the service are found, and found again once indexed', async () => {
    const db = app.database.db;
    await indexAll(f);
    const values = { ...f.defaults, ...body(f, ++serial, 'Quetzalcóatl écrit', 'x'), created_at: dbTimestamp(), updated_at: dbTimestamp() };
    const [id] = await db(f.name).insert(values);
    // The triggers list writes made around the service too.
    expect(await pendingIds(f)).toEqual([Number(id)]);
    expect(await search(f, 'QUETZAL')).toEqual([Number(id)]);
    expect(await indexAll(f)).toBe(1);
    expect(await search(f, 'QUETZAL')).toEqual([Number(id)]);
    await db(f.name)
      .where({ id })
      .update({ [f.searchFields[0]]: f.name === 'users' ? `Tlaloc.${++serial}` : 'Tlaloc' });
    expect(await pendingIds(f)).toEqual([Number(id)]);
    expect(await search(f, 'quetzal')).toEqual([]);
    expect(await search(f, 'tlaloc')).toEqual([Number(id)]);
    expect(await indexAll(f)).toBe(1);
    expect(await search(f, 'quetzal')).toEqual([]);
    expect(await search(f, 'tlaloc')).toEqual([Number(id)]);
    await db(f.name).where({ id }).delete();
    expect(await search(f, 'tlaloc')).toEqual([]);
    expect(await indexAll(f)).toBe(1);
    expect(await search(f, 'tlaloc')).toEqual([]);
  });

  // A create, a change of text and a delete each leave the record pending (checked by the scan's
  // predicate) until indexPending moves it into the sets, or out of them.
  test('a create, PATCH or DELETE leaves the record pending until it is indexed', async () => {
    const [a] = f.searchFields;
    await indexAll(f);
    const rec = await create(f, body(f, ++serial, f.name === 'users' ? `Popocatépetl.${serial}` : 'Popocatépetl humea', 'x'));
    expect(await pendingIds(f)).toEqual([rec.id]);
    expect(await setsHold(f, 'popocat', rec.id)).toBe(false);
    expect(await search(f, 'POPOCAT')).toEqual([rec.id]);
    expect(await indexAll(f)).toBe(1);
    expect(await pendingIds(f)).toEqual([]);
    expect(await setsHold(f, 'popocat', rec.id)).toBe(true);
    expect(await search(f, 'POPOCAT')).toEqual([rec.id]);

    const renamed = f.name === 'users' ? `Iztaccíhuatl.${++serial}` : 'Iztaccíhuatl';
    expect((await app.request('PATCH', `/api/${f.name}/${rec.id}/`, { body: { [a]: renamed } })).status).toBe(200);
    expect(await pendingIds(f)).toEqual([rec.id]);
    expect(await setsHold(f, 'popocat', rec.id)).toBe(true);
    expect(await setsHold(f, 'iztacc', rec.id)).toBe(false);
    expect(await search(f, 'popocat')).toEqual([]);
    expect(await search(f, 'IZTACC')).toEqual([rec.id]);
    await indexAll(f);
    expect(await pendingIds(f)).toEqual([]);
    expect(await setsHold(f, 'popocat', rec.id)).toBe(false);
    expect(await setsHold(f, 'iztacc', rec.id)).toBe(true);
    expect(await search(f, 'popocat')).toEqual([]);
    expect(await search(f, 'IZTACC')).toEqual([rec.id]);

    expect((await app.request('DELETE', `/api/${f.name}/${rec.id}/`)).status).toBe(204);
    expect(await pendingIds(f)).toEqual([rec.id]);
    expect(await search(f, 'iztacc')).toEqual([]);
    await indexAll(f);
    expect(await pendingIds(f)).toEqual([]);
    expect(await setsHold(f, 'iztacc', rec.id)).toBe(false);
    expect(await search(f, 'iztacc')).toEqual([]);
  });

  test('a write rolled back, and a conditional write refused, leave search exact and nothing pending', async () => {
    const [a] = f.searchFields;
    const rec = await create(f, body(f, ++serial, f.name === 'users' ? `Orinoco.${++serial}` : 'Orinoco delta', 'x'));
    await indexAll(f);
    const renamed = f.name === 'users' ? `Amazonas.${++serial}` : 'Amazonas';
    await expect(
      app.database.db.transaction(async (trx) => {
        await updateRecord(trx, f.name, rec.id, { [a]: renamed });
        throw new Error('rolled back after the update');
      }),
    ).rejects.toThrow('rolled back');
    expect(await pendingIds(f)).toEqual([]);
    expect(await search(f, 'amazonas')).toEqual([]);
    expect(await search(f, 'orinoco')).toEqual([rec.id]);

    const refused = await app.request('PATCH', `/api/${f.name}/${rec.id}/`, { body: { [a]: renamed }, headers: { 'If-Match': '"999"' } });
    expect(refused.status).toBe(412);
    expect(await pendingIds(f)).toEqual([]);
    expect(await search(f, 'amazonas')).toEqual([]);
    expect(await search(f, 'orinoco')).toEqual([rec.id]);
  });

  // A word longer than a piece (keys.ts WORD_PIECE) is held as overlapping pieces; any term the
  // API takes (200 characters) lies whole in one. Only fields of unbounded text can hold one.
  (['posts', 'products', 'tasks'].includes(f.name) ? test : test.skip)(
    'a word longer than a piece is found inside and across its pieces, pending and indexed',
    async () => {
      const long = `${'ab'.repeat(150)}needle${'cd'.repeat(150)}`;
      const rec = await create(f, body(f, ++serial, 'long word', `${long} tail`));
      const terms = [
        'needle',
        `${'ab'.repeat(90)}needle`,
        `needle${'cd'.repeat(90)}`,
        `"cd tail"`,
        'ba'.repeat(100),
        `"${'cd'.repeat(60)} ta"`,
      ];
      for (const state of ['pending', 'indexed']) {
        if (state === 'indexed') await indexAll(f);
        for (const s of terms) {
          const want = await scan(f, s);
          expect(want).toContain(rec.id);
          expect({ state, s, ...(await pages(f, s)) }).toEqual({ state, s, count: want.length, ids: want });
        }
      }
      expect((await app.request('DELETE', `/api/${f.name}/${rec.id}/`)).status).toBe(204);
    },
  );

  // The sets must be what answers, not the check of pending records: once indexed, every
  // record is in the sets (its grams at least) and none is pending.
  test('records written through the service are indexed, none left pending', async () => {
    const db = app.database.db;
    await indexAll(f);
    expect(await pendingCount(db, f.name)).toBe(0);
    const records = ((await db(f.name).orderBy('id').pluck('id')) as (number | string)[]).map(Number);
    const rows: { bits: Buffer }[] = await db(`${f.name}_search_sets`).select('bits');
    const { RoaringBitmap32 } = await import('roaring');
    const held = RoaringBitmap32.orMany(rows.map((r) => RoaringBitmap32.deserialize(r.bits, 'portable')));
    expect(held.toArray()).toEqual(records);
  });
});

// better-sqlite3 gives a pool one connection: a search's snapshot held on it would make every
// other request of the process wait for the search to end. Searches read on one of their own.
(dialect === 'sqlite' ? test : test.skip)('SQLite: a search answers while a write transaction holds the pool’s connection', async () => {
  const f = fixtures.find((x) => x.name === 'posts')!;
  const rec = await create(f, body(f, ++serial, 'Zambezi basin', 'x'));
  await indexAll(f);
  const found = await app.database.db.transaction(async (trx) => {
    await trx(f.name).where({ id: rec.id }).update({ title: 'Limpopo basin' });
    // The write is not committed: the search answers from the last commit.
    return Promise.all([search(f, 'zambezi'), search(f, 'limpopo')]);
  });
  expect(found).toEqual([[rec.id], []]);
  expect(await search(f, 'limpopo')).toEqual([rec.id]);
  expect(await search(f, 'zambezi')).toEqual([]);
});

// Searches queued for that connection would otherwise take it one after another in promise
// callbacks, and a request arriving meanwhile would be read only once every one had run.
(dialect === 'sqlite' ? test : test.skip)('SQLite: a search lets the event loop run before its statements', async () => {
  const order: string[] = [];
  setImmediate(() => order.push('event loop'));
  await inSnapshot(app.database.db, async (db) => {
    order.push('search');
    await db('posts').first('id');
  });
  expect(order).toEqual(['event loop', 'search']);
});
