import { startTestApp, type TestApp, type TestResponse } from '../../helpers/app';
import { byName, fixtures, type Fixture } from '../../helpers/fixtures';

// This file's database holds only the records created below, so a filter's expected result is
// the whole list of matching records, and `count` can be checked exactly.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

type Rec = Record<string, any> & { id: number };
type Params = Record<string, string>;

interface FilterCase {
  f: Fixture;
  /** Records by tag, created in this order (so the default order is the reverse). */
  rows: [string, Record<string, unknown>][];
  /** A filter and the tags it must return; order is the default newest first. */
  filters: [string, { given: Params; want: string[] }][];
  /** Filters whose result spans pages: `want` in the order the pages must give it. */
  paging: [string, { given: Params; want: string[] }][];
  /** A bad value and the parameters the 400 may name (a range names one of its two ends). */
  bad: [string, { given: Params; names: string[] }][];
}

const cases: FilterCase[] = [
  {
    f: byName.posts,
    rows: [
      ['P1', { title: 'red kite', author: 'ann' }],
      ['P2', { title: 'blue kite', author: 'Ann' }],
      ['P3', { title: 'red boat', author: 'anna' }],
      ['P4', { title: 'red kite two', author: 'ann' }],
      ['P5', { title: 'green boat', author: 'ann ' }],
      ['P6', { title: 'red boat two', author: 'bob' }],
      ['P7', { title: 'gray kite', author: 'ann' }],
    ],
    filters: [
      // "Exact": not ignoring case, not a prefix, not ignoring trailing spaces (MySQL's PAD SPACE would).
      ['author: exactly this author', { given: { author: 'ann' }, want: ['P1', 'P4', 'P7'] }],
      ['author: another case is another author', { given: { author: 'Ann' }, want: ['P2'] }],
      ['author: a longer name is another author', { given: { author: 'anna' }, want: ['P3'] }],
      ['author: a trailing space is part of the name', { given: { author: 'ann ' }, want: ['P5'] }],
      ['author: a prefix matches nobody', { given: { author: 'an' }, want: [] }],
      ['author: nobody by that name', { given: { author: 'nobody' }, want: [] }],
      ['author AND search', { given: { author: 'ann', search: 'kite' }, want: ['P1', 'P4', 'P7'] }],
      ['author AND a narrower search', { given: { author: 'ann', search: 'two' }, want: ['P4'] }],
      ['author AND a two-term search', { given: { author: 'bob', search: 'red boat' }, want: ['P6'] }],
      ['author AND a search that only other authors match', { given: { author: 'ann', search: 'boat' }, want: [] }],
      [
        'search alone is not narrowed by a filter of another collection',
        { given: { search: 'boat', genre: 'x' }, want: ['P3', 'P5', 'P6'] },
      ],
    ],
    paging: [
      ['author, one a page', { given: { author: 'ann', page_size: '1' }, want: ['P7', 'P4', 'P1'] }],
      [
        'author and search, ordered',
        { given: { author: 'ann', search: 'kite', ordering: 'title', page_size: '2' }, want: ['P7', 'P1', 'P4'] },
      ],
    ],
    bad: [
      ['an empty author', { given: { author: '' }, names: ['author'] }],
      ['an author longer than the field', { given: { author: 'a'.repeat(51) }, names: ['author'] }],
    ],
  },
  {
    f: byName.products,
    rows: [
      ['R1', { name: 'steel bolt', price: '5.00', stock: 0 }],
      ['R2', { name: 'steel nut', price: '9.99', stock: 3 }],
      ['R3', { name: 'brass bolt', price: '10.00', stock: 0 }],
      ['R4', { name: 'brass nut', price: '10.01', stock: 1 }],
      ['R5', { name: 'steel washer', price: '20.00', stock: 7 }],
      ['R6', { name: 'free sample', price: '0.00', stock: 0 }],
    ],
    filters: [
      ['min_price includes its bound', { given: { min_price: '9.99' }, want: ['R2', 'R3', 'R4', 'R5'] }],
      ['min_price without decimals equals the price with them', { given: { min_price: '10' }, want: ['R3', 'R4', 'R5'] }],
      ['min_price one cent above a price leaves it out', { given: { min_price: '10.01' }, want: ['R4', 'R5'] }],
      ['max_price includes its bound', { given: { max_price: '10.00' }, want: ['R1', 'R2', 'R3', 'R6'] }],
      ['max_price one cent below a price leaves it out', { given: { max_price: '9.99' }, want: ['R1', 'R2', 'R6'] }],
      ['max_price 0 keeps free products', { given: { max_price: '0' }, want: ['R6'] }],
      ['min_price 0 keeps everything', { given: { min_price: '0.00' }, want: ['R1', 'R2', 'R3', 'R4', 'R5', 'R6'] }],
      ['both bounds, inclusive at both ends', { given: { min_price: '9.99', max_price: '10.01' }, want: ['R2', 'R3', 'R4'] }],
      ['equal bounds are one price, not a 400', { given: { min_price: '10', max_price: '10.00' }, want: ['R3'] }],
      ['in_stock=true: stock above 0', { given: { in_stock: 'true' }, want: ['R2', 'R4', 'R5'] }],
      ['in_stock=false: stock exactly 0', { given: { in_stock: 'false' }, want: ['R1', 'R3', 'R6'] }],
      ['in_stock AND max_price', { given: { in_stock: 'true', max_price: '10.00' }, want: ['R2'] }],
      ['out of stock AND min_price', { given: { in_stock: 'false', min_price: '5' }, want: ['R1', 'R3'] }],
      ['search AND in_stock', { given: { search: 'bolt', in_stock: 'false' }, want: ['R1', 'R3'] }],
      ['search AND min_price', { given: { search: 'steel', min_price: '9.99' }, want: ['R2', 'R5'] }],
      ['search AND every filter', { given: { search: 'steel', min_price: '9.99', max_price: '19.99', in_stock: 'true' }, want: ['R2'] }],
    ],
    paging: [
      ['in_stock=false, one a page', { given: { in_stock: 'false', page_size: '1' }, want: ['R6', 'R3', 'R1'] }],
      [
        'a price range, by price descending',
        { given: { min_price: '5', max_price: '10.01', ordering: '-price', page_size: '2' }, want: ['R4', 'R3', 'R2', 'R1'] },
      ],
    ],
    bad: [
      ['min_price above max_price', { given: { min_price: '10.01', max_price: '10' }, names: ['min_price', 'max_price'] }],
      ['min_price far above max_price', { given: { min_price: '100', max_price: '9.99' }, names: ['min_price', 'max_price'] }],
      ['min_price not a number', { given: { min_price: 'abc' }, names: ['min_price'] }],
      ['max_price negative', { given: { max_price: '-1' }, names: ['max_price'] }],
      ['min_price with three decimals', { given: { min_price: '1.234' }, names: ['min_price'] }],
      ['max_price above the largest price', { given: { max_price: '100000000' }, names: ['max_price'] }],
      ['in_stock=maybe', { given: { in_stock: 'maybe' }, names: ['in_stock'] }],
      ['in_stock=yes', { given: { in_stock: 'yes' }, names: ['in_stock'] }],
      ['in_stock empty', { given: { in_stock: '' }, names: ['in_stock'] }],
    ],
  },
  {
    f: byName.books,
    rows: [
      ['B1', { title: 'dark forest', author: 'Ada Stone', genre: 'Fantasy', published_date: '1999-12-31' }],
      ['B2', { title: 'bright forest', author: 'Ada Stone', genre: 'fantasy', published_date: '2000-01-01' }],
      ['B3', { title: 'dark sea', author: 'Ben Reed', genre: 'Sci-Fi', published_date: '2000-01-01' }],
      ['B4', { title: 'calm sea', author: 'Ada Stone', genre: '', published_date: null }],
      ['B5', { title: 'dark hill', author: 'Ada Stoneman', genre: 'Fantasy', published_date: '2010-06-15' }],
      ['B6', { title: 'open sky', author: 'Ben Reed', genre: 'Fantasy', published_date: '2000-02-29' }],
      ['B7', { title: 'quiet bay', author: 'Ben Reed ', genre: 'Fantasy ', published_date: null }],
    ],
    filters: [
      ['genre exact', { given: { genre: 'Fantasy' }, want: ['B1', 'B5', 'B6'] }],
      ['genre in another case is another genre', { given: { genre: 'fantasy' }, want: ['B2'] }],
      ['genre: a trailing space is part of the genre', { given: { genre: 'Fantasy ' }, want: ['B7'] }],
      ['genre with punctuation', { given: { genre: 'Sci-Fi' }, want: ['B3'] }],
      ['an empty genre finds books without one', { given: { genre: '' }, want: ['B4'] }],
      ['author exact, not a prefix of a longer name', { given: { author: 'Ada Stone' }, want: ['B1', 'B2', 'B4'] }],
      ['author exact, not ignoring a trailing space', { given: { author: 'Ben Reed' }, want: ['B3', 'B6'] }],
      ['author with a trailing space', { given: { author: 'Ben Reed ' }, want: ['B7'] }],
      ['author AND genre', { given: { author: 'Ben Reed', genre: 'Fantasy' }, want: ['B6'] }],
      [
        'published_after includes its day and leaves out undated books',
        { given: { published_after: '2000-01-01' }, want: ['B2', 'B3', 'B5', 'B6'] },
      ],
      [
        'published_before includes its day and leaves out undated books',
        { given: { published_before: '2000-01-01' }, want: ['B1', 'B2', 'B3'] },
      ],
      ['a one-day range', { given: { published_after: '2000-01-01', published_before: '2000-01-01' }, want: ['B2', 'B3'] }],
      ['a range ending on a leap day', { given: { published_after: '2000-01-02', published_before: '2000-02-29' }, want: ['B6'] }],
      ['published_before a day before the oldest', { given: { published_before: '1999-12-30' }, want: [] }],
      ['search AND published_after', { given: { search: 'dark', published_after: '2000-01-01' }, want: ['B3', 'B5'] }],
      ['search AND genre', { given: { search: 'forest', genre: 'Fantasy' }, want: ['B1'] }],
      [
        'search AND author AND published_before',
        { given: { search: 'ada', author: 'Ada Stone', published_before: '2005-01-01' }, want: ['B1', 'B2'] },
      ],
    ],
    paging: [
      ['published_after, one a page', { given: { published_after: '2000-01-01', page_size: '1' }, want: ['B6', 'B5', 'B3', 'B2'] }],
      ['genre, by published_date', { given: { genre: 'Fantasy', ordering: 'published_date', page_size: '2' }, want: ['B1', 'B6', 'B5'] }],
    ],
    bad: [
      ['published_after on a day February does not have', { given: { published_after: '2026-02-30' }, names: ['published_after'] }],
      ['published_before without leading zeros', { given: { published_before: '2026-1-1' }, names: ['published_before'] }],
      ['published_after on 29 February of a common year', { given: { published_after: '2023-02-29' }, names: ['published_after'] }],
      ['published_after without dashes', { given: { published_after: '20260101' }, names: ['published_after'] }],
      ['published_before with a time', { given: { published_before: '2026-01-01T00:00:00Z' }, names: ['published_before'] }],
      [
        'published_after after published_before',
        { given: { published_after: '2001-01-01', published_before: '2000-12-31' }, names: ['published_after', 'published_before'] },
      ],
      ['a genre longer than the field', { given: { genre: 'g'.repeat(51) }, names: ['genre'] }],
    ],
  },
  {
    // Users have no filters: other collections' filter names are unknown parameters, ignored.
    f: byName.users,
    rows: [
      ['U1', { username: 'ann', email: 'ann@example.com' }],
      ['U2', { username: 'bob', email: 'bob@example.com' }],
      ['U3', { username: 'cat', email: 'cat@example.com' }],
    ],
    filters: [
      ["other collections' filters are ignored", { given: { author: 'ann', status: 'done', min_price: '5' }, want: ['U1', 'U2', 'U3'] }],
      ['search still filters', { given: { search: 'bob', author: 'ann' }, want: ['U2'] }],
    ],
    paging: [['ignored parameters stay in the links', { given: { status: 'done', page_size: '1' }, want: ['U3', 'U2', 'U1'] }]],
    bad: [],
  },
  {
    f: byName.tasks,
    rows: [
      ['T1', { title: 'fix login', status: 'todo', priority: 'high', due_date: '2026-03-01' }],
      ['T2', { title: 'fix logout', status: 'in_progress', priority: 'low', due_date: '2026-02-28' }],
      ['T3', { title: 'write docs', status: 'done', priority: 'medium', due_date: null }],
      ['T4', { title: 'write tests', status: 'todo', priority: 'low', due_date: '2026-03-02' }],
      ['T5', { title: 'fix docs', status: 'done', priority: 'high', due_date: '2026-01-01' }],
      ['T6', { title: 'plan sprint', status: 'in_progress', priority: 'medium', due_date: '2026-03-01' }],
    ],
    filters: [
      ['one status', { given: { status: 'todo' }, want: ['T1', 'T4'] }],
      ['another status', { given: { status: 'in_progress' }, want: ['T2', 'T6'] }],
      ['two statuses', { given: { status: 'todo,done' }, want: ['T1', 'T3', 'T4', 'T5'] }],
      ['every status', { given: { status: 'done,in_progress,todo' }, want: ['T1', 'T2', 'T3', 'T4', 'T5', 'T6'] }],
      ['a status given twice', { given: { status: 'todo,todo' }, want: ['T1', 'T4'] }],
      ['one priority', { given: { priority: 'high' }, want: ['T1', 'T5'] }],
      ['two priorities', { given: { priority: 'low,medium' }, want: ['T2', 'T3', 'T4', 'T6'] }],
      ['status AND priority', { given: { status: 'todo', priority: 'low' }, want: ['T4'] }],
      [
        'several statuses AND several priorities',
        { given: { status: 'done,in_progress', priority: 'high,medium' }, want: ['T3', 'T5', 'T6'] },
      ],
      ['due_after includes its day and leaves out undated tasks', { given: { due_after: '2026-03-01' }, want: ['T1', 'T4', 'T6'] }],
      ['due_before includes its day and leaves out undated tasks', { given: { due_before: '2026-03-01' }, want: ['T1', 'T2', 'T5', 'T6'] }],
      ['a one-day range', { given: { due_after: '2026-03-01', due_before: '2026-03-01' }, want: ['T1', 'T6'] }],
      ['a range across the end of February', { given: { due_after: '2026-02-28', due_before: '2026-03-01' }, want: ['T1', 'T2', 'T6'] }],
      ['due_before a day before the earliest', { given: { due_before: '2025-12-31' }, want: [] }],
      ['search AND several statuses', { given: { search: 'fix', status: 'todo,done' }, want: ['T1', 'T5'] }],
      ['search AND priority', { given: { search: 'docs', priority: 'medium' }, want: ['T3'] }],
      ['search AND due_after AND priority', { given: { search: 'fix', due_after: '2026-02-01', priority: 'low' }, want: ['T2'] }],
    ],
    paging: [
      ['two statuses, one a page', { given: { status: 'todo,done', page_size: '1' }, want: ['T5', 'T4', 'T3', 'T1'] }],
      // high ties (T1, T5) break by id descending, like the last key.
      [
        'two statuses by priority descending',
        { given: { status: 'todo,done', ordering: '-priority', page_size: '2' }, want: ['T5', 'T1', 'T3', 'T4'] },
      ],
      [
        'search, priorities and a date range',
        {
          given: { search: 'fix', priority: 'high,low', due_after: '2026-01-01', due_before: '2026-03-01', page_size: '1' },
          want: ['T5', 'T2', 'T1'],
        },
      ],
    ],
    bad: [
      ['an unknown status', { given: { status: 'nope' }, names: ['status'] }],
      ['an unknown status after a known one', { given: { status: 'todo,nope' }, names: ['status'] }],
      ['a status in another case', { given: { status: 'TODO' }, names: ['status'] }],
      ['an empty status', { given: { status: '' }, names: ['status'] }],
      ['an unknown priority', { given: { priority: 'urgent' }, names: ['priority'] }],
      ['an empty item in the priority list', { given: { priority: 'high,' }, names: ['priority'] }],
      ['due_after on a day February does not have', { given: { due_after: '2026-02-30' }, names: ['due_after'] }],
      ['due_before without leading zeros', { given: { due_before: '2026-1-1' }, names: ['due_before'] }],
      ['due_before a word', { given: { due_before: 'tomorrow' }, names: ['due_before'] }],
      ['due_after after due_before', { given: { due_after: '2026-03-02', due_before: '2026-03-01' }, names: ['due_after', 'due_before'] }],
    ],
  },
];

function list(f: Fixture, params: Params): Promise<TestResponse> {
  return app.request('GET', `/api/${f.name}/?${new URLSearchParams(params).toString()}`);
}

function pathOf(link: string): string {
  expect(link.startsWith(`${app.url}/`)).toBe(true);
  return link.slice(app.url.length);
}

function sortedParams(params: URLSearchParams): [string, string][] {
  return [...params].sort(([a, x], [b, y]) => (a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1));
}

/** A link keeps every parameter of the request (decoded, in any order) and changes only `page`. */
function expectLink(link: string, f: Fixture, given: Params, page: number): void {
  const url = new URL(link);
  expect(url.pathname).toBe(`/api/${f.name}/`);
  expect(sortedParams(url.searchParams)).toEqual(sortedParams(new URLSearchParams({ ...given, page: String(page) })));
}

// Written out by hand, so a collection declared later is not covered until it has a case here.
test('every collection has a case', () => {
  expect(cases.map((c) => c.f.name)).toEqual(fixtures.map((f) => f.name));
});

describe.each(cases.map((c) => [c.f.name, c] as const))('%s', (name, c) => {
  const byTag = new Map<string, Rec>();
  const newestFirst = (tags: string[]) =>
    [...c.rows]
      .reverse()
      .filter(([t]) => tags.includes(t))
      .map(([t]) => byTag.get(t)!);

  beforeAll(async () => {
    for (const [i, [tag, fields]] of c.rows.entries()) {
      const res = await app.request('POST', `/api/${name}/`, { body: { ...c.f.valid(i + 1), ...fields } });
      expect(res.status).toBe(201);
      // Stored as sent: the filters below rely on the exact values (a trailing space, a case).
      expect(res.body).toMatchObject(fields);
      byTag.set(tag, res.body);
    }
  });

  test('without filters the list holds the whole dataset', async () => {
    const res = await list(c.f, { page_size: '10' });
    expect(res.body).toEqual({ count: c.rows.length, next: null, previous: null, results: newestFirst(c.rows.map(([t]) => t)) });
  });

  test.each(c.filters)('%s', async (_n, { given, want }) => {
    const res = await list(c.f, { ...given, page_size: '10' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: want.length, next: null, previous: null, results: newestFirst(want) });
  });

  if (c.paging.length) {
    test.each(c.paging)('pages keep the filter: %s', async (_n, { given, want }) => {
      const size = Number(given.page_size);
      const lastPage = Math.ceil(want.length / size);
      const wanted = want.map((t) => byTag.get(t)!);
      // Forward through `next`: every page counts the filtered list and links with the same filter.
      let res = await list(c.f, given);
      for (let page = 1; ; page++) {
        expect(res.status).toBe(200);
        expect(res.body.count).toBe(want.length);
        expect(res.body.results).toEqual(wanted.slice((page - 1) * size, page * size));
        if (page > 1) expectLink(res.body.previous, c.f, given, page - 1);
        else expect(res.body.previous).toBeNull();
        if (page === lastPage) {
          expect(res.body.next).toBeNull();
          break;
        }
        expectLink(res.body.next, c.f, given, page + 1);
        res = await app.request('GET', pathOf(res.body.next));
      }
      // And back through `previous` to page 1.
      for (let page = lastPage - 1; page >= 1; page--) {
        res = await app.request('GET', pathOf(res.body.previous));
        expect(res.status).toBe(200);
        expect(res.body.count).toBe(want.length);
        expect(res.body.results).toEqual(wanted.slice((page - 1) * size, page * size));
      }
      expect(res.body.previous).toBeNull();
    });
  }

  if (c.bad.length) {
    test.each(c.bad)('%s is 400 naming the parameter', async (_n, { given, names }) => {
      const res = await list(c.f, given);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400, detail: expect.any(String) });
      expect(res.body.errors.length).toBeGreaterThan(0);
      for (const e of res.body.errors) {
        expect(names).toContain(e.field);
        expect(e.message).toEqual(expect.any(String));
      }
    });
  }
});
