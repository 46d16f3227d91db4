import { startTestApp, type TestApp, type TestResponse } from '../../helpers/app';
import { byName, fixtures, type Fixture } from '../../helpers/fixtures';

// This file's database holds only the records created below, so every list here is the whole
// dataset of its collection and every expected order can be written down in full.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

type Rec = Record<string, any> & { id: number };
/** How the spec says a field sorts: text as binary strings, numbers and decimals by value, ranks by enum position. */
type Kind = 'text' | 'number' | 'decimal' | 'rank';

const PRIORITY_RANK = ['low', 'medium', 'high'];
const COMMON: Record<string, Kind> = { id: 'number', created_at: 'text', updated_at: 'text' };

interface OrderingCase {
  f: Fixture;
  /** The collection's own sortable fields (the list), beside id, created_at and updated_at. */
  fields: Record<string, Kind>;
  /** Created in this order, so index order is id order. Every field has at least one tie. */
  rows: Record<string, unknown>[];
  /** Multi-key orderings and the expected order as indexes into `rows`, worked out by hand. */
  multi: [string, number[]][];
  /** A field with two equal values, and the expected asc order (desc is checked by its own row). */
  tie: { field: string; asc: number[]; desc: number[] };
  /** Names that are not sortable here: a field of another collection, and a real unsortable field. */
  foreign: string;
  unsortable: string;
}

// Text values are lower-case ASCII so that "binary" and "ignoring case" orders agree on both
// databases (users.email is compared ignoring case); the spec does not order mixed case.
const cases: OrderingCase[] = [
  {
    f: byName.posts,
    fields: { title: 'text', author: 'text' },
    rows: [
      { title: 'delta', author: 'kim' },
      { title: 'alpha', author: 'lee' },
      { title: 'charlie', author: 'kim' },
      { title: 'alpha', author: 'ann' },
      { title: 'bravo', author: 'lee' },
      { title: 'echo', author: 'ann' },
    ],
    multi: [
      ['author,-title', [5, 3, 0, 2, 4, 1]],
      ['title,author', [3, 1, 4, 2, 0, 5]],
    ],
    tie: { field: 'title', asc: [1, 3, 4, 2, 0, 5], desc: [5, 0, 2, 4, 3, 1] },
    foreign: 'price',
    unsortable: 'content',
  },
  {
    f: byName.products,
    // Prices sort as numbers: as text "10.00" < "100.00" < "9.50" would be wrong.
    fields: { name: 'text', price: 'decimal', stock: 'number' },
    rows: [
      { name: 'widget', price: '10.00', stock: 5 },
      { name: 'bolt', price: '9.50', stock: 10 },
      { name: 'anchor', price: '100.00', stock: 0 },
      { name: 'bolt', price: '10.00', stock: 2 },
      { name: 'clamp', price: '0.99', stock: 10 },
      { name: 'drill', price: '10', stock: 5 },
    ],
    multi: [
      ['-price,name', [2, 3, 5, 0, 1, 4]],
      // stock 5 and price 10.00 tie for rows 0 and 5: id breaks it, ascending like the last key.
      ['-stock,price', [4, 1, 0, 5, 3, 2]],
    ],
    tie: { field: 'price', asc: [4, 1, 0, 3, 5, 2], desc: [2, 5, 3, 0, 1, 4] },
    foreign: 'title',
    unsortable: 'description',
  },
  {
    f: byName.books,
    fields: { title: 'text', author: 'text', published_date: 'text' },
    rows: [
      { title: 'moby', author: 'melville', published_date: '1999-12-31' },
      { title: 'dune', author: 'herbert', published_date: '2001-01-01' },
      { title: 'emma', author: 'austen', published_date: '1999-12-31' },
      { title: 'dune', author: 'austen', published_date: '1850-06-15' },
      { title: 'ulysses', author: 'joyce', published_date: '2020-02-29' },
      { title: 'beloved', author: 'herbert', published_date: '2001-01-01' },
    ],
    multi: [
      // herbert's two books share a date: id breaks the tie, descending like the last key.
      ['author,-published_date', [2, 3, 5, 1, 4, 0]],
      ['-published_date,title', [4, 5, 1, 2, 0, 3]],
    ],
    tie: { field: 'title', asc: [5, 1, 3, 2, 0, 4], desc: [4, 0, 2, 3, 1, 5] },
    foreign: 'username',
    unsortable: 'isbn',
  },
  {
    f: byName.users,
    fields: { username: 'text', email: 'text', last_name: 'text' },
    rows: [
      { username: 'carol', email: 'mail.a@example.com', last_name: 'smith' },
      { username: 'alice', email: 'mail.d@example.com', last_name: 'jones' },
      { username: 'erin', email: 'mail.b@example.com', last_name: 'smith' },
      { username: 'bob', email: 'mail.f@example.com', last_name: 'brown' },
      { username: 'dave', email: 'mail.c@example.com', last_name: 'jones' },
      { username: 'frank', email: 'mail.e@example.com', last_name: 'adams' },
    ],
    multi: [
      ['last_name,-username', [5, 3, 4, 1, 2, 0]],
      ['-last_name,email', [0, 2, 4, 1, 3, 5]],
    ],
    tie: { field: 'last_name', asc: [5, 3, 1, 4, 0, 2], desc: [2, 0, 4, 1, 3, 5] },
    foreign: 'title',
    unsortable: 'first_name',
  },
  {
    f: byName.tasks,
    // status sorts as text (only priority is ranked by the issue).
    fields: { title: 'text', status: 'text', priority: 'rank', due_date: 'text' },
    rows: [
      { title: 'write', status: 'todo', priority: 'high', due_date: '2026-03-01' },
      { title: 'plan', status: 'done', priority: 'low', due_date: '2026-01-15' },
      { title: 'test', status: 'in_progress', priority: 'medium', due_date: '2026-03-01' },
      { title: 'plan', status: 'todo', priority: 'low', due_date: '2025-12-31' },
      { title: 'ship', status: 'in_progress', priority: 'high', due_date: '2026-02-01' },
      { title: 'review', status: 'done', priority: 'medium', due_date: '2026-02-01' },
    ],
    multi: [
      ['-priority,due_date', [4, 0, 5, 2, 3, 1]],
      ['status,-priority,title', [5, 1, 4, 2, 0, 3]],
    ],
    tie: { field: 'title', asc: [1, 3, 5, 4, 2, 0], desc: [0, 2, 4, 5, 3, 1] },
    foreign: 'author',
    unsortable: 'description',
  },
];

function compareValues(a: unknown, b: unknown, kind: Kind): number {
  if (kind === 'number') return Number(a) - Number(b);
  if (kind === 'decimal') return Number(a) - Number(b);
  if (kind === 'rank') return PRIORITY_RANK.indexOf(String(a)) - PRIORITY_RANK.indexOf(String(b));
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The order the spec defines: the keys, then id in the direction of the last key. */
function sorted(records: Rec[], ordering: string, kinds: Record<string, Kind>): Rec[] {
  const keys = ordering.split(',').map((k) => ({ field: k.replace(/^-/, ''), desc: k.startsWith('-') }));
  if (!keys.some((k) => k.field === 'id')) keys.push({ field: 'id', desc: keys[keys.length - 1].desc });
  return [...records].sort((a, b) => {
    for (const k of keys) {
      const c = compareValues(a[k.field], b[k.field], kinds[k.field]);
      if (c !== 0) return k.desc ? -c : c;
    }
    return 0;
  });
}

function list(f: Fixture, params: Record<string, string>): Promise<TestResponse> {
  return app.request('GET', `/api/${f.name}/?${new URLSearchParams(params).toString()}`);
}

function pathOf(link: string): string {
  expect(link.startsWith(`${app.url}/`)).toBe(true);
  return link.slice(app.url.length);
}

/** Follows `next` from page 1 to the end and returns every record, checking that links keep `ordering`. */
async function walk(f: Fixture, params: Record<string, string>, total: number): Promise<Rec[]> {
  const seen: Rec[] = [];
  let res = await list(f, { ...params, page_size: '2' });
  for (;;) {
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(total);
    seen.push(...res.body.results);
    if (!res.body.next) break;
    expect(new URL(res.body.next).searchParams.get('ordering')).toBe(params.ordering ?? null);
    res = await app.request('GET', pathOf(res.body.next));
  }
  return seen;
}

function expectOrdered(res: TestResponse, want: Rec[]): void {
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ count: want.length, next: null, previous: null, results: want });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Written out by hand, so a collection declared later is not covered until it has a case here.
test('every collection has a case', () => {
  expect(cases.map((c) => c.f.name)).toEqual(fixtures.map((f) => f.name));
});

describe.each(cases.map((c) => [c.f.name, c] as const))('%s', (name, c) => {
  const kinds = { ...COMMON, ...c.fields };
  let records: Rec[]; // as served after setup, index = creation order
  const at = (indexes: number[]) => indexes.map((i) => records[i]);
  const all = { page_size: '10' };

  beforeAll(async () => {
    const created: Rec[] = [];
    for (const [i, row] of c.rows.entries()) {
      const res = await app.request('POST', `/api/${name}/`, { body: { ...c.f.valid(i + 1), ...row } });
      expect(res.status).toBe(201);
      created.push(res.body);
    }
    // Rewrite two older records (to their own values) so that updated_at order differs from
    // created_at order; otherwise ordering by either would pass by accident.
    for (const i of [2, 0]) {
      await sleep(3);
      const field = Object.keys(c.fields)[0];
      const res = await app.request('PATCH', `/api/${name}/${created[i].id}/`, { body: { [field]: c.rows[i][field] } });
      expect(res.status).toBe(200);
    }
    records = [];
    for (const r of created) records.push((await app.request('GET', `/api/${name}/${r.id}/`)).body);
  });

  test('the dataset is what the expectations assume (ids ascend in creation order)', () => {
    expect(records.map((r) => r.id)).toEqual([...records.map((r) => r.id)].sort((a, b) => a - b));
    expect(
      sorted(records, 'updated_at', kinds)
        .slice(-2)
        .map((r) => r.id),
    ).toEqual([records[2].id, records[0].id]);
  });

  const singles: [string, { given: string }][] = Object.keys(kinds).flatMap((field) => [
    [`${field} ascending`, { given: field }],
    [`${field} descending`, { given: `-${field}` }],
  ]);
  test.each(singles)('ordering by %s', async (_n, { given }) => {
    const want = sorted(records, given, kinds);
    expectOrdered(await list(c.f, { ...all, ordering: given }), want);
    // Pages of two, followed by `next`, give the same order with nothing repeated or skipped.
    expect((await walk(c.f, { ordering: given }, records.length)).map((r) => r.id)).toEqual(want.map((r) => r.id));
  });

  const multi: [string, { given: string; want: number[] }][] = c.multi.map(([given, want]) => [given, { given, want }]);
  test.each(multi)('multi-key ordering %s', async (_n, { given, want }) => {
    expectOrdered(await list(c.f, { ...all, ordering: given }), at(want));
    expect((await walk(c.f, { ordering: given }, records.length)).map((r) => r.id)).toEqual(at(want).map((r) => r.id));
  });

  const ties: [string, { given: string; want: number[] }][] = [
    [`${c.tie.field}: equal values ascend by id`, { given: c.tie.field, want: c.tie.asc }],
    [`-${c.tie.field}: equal values descend by id`, { given: `-${c.tie.field}`, want: c.tie.desc }],
  ];
  test.each(ties)('tie-break %s', async (_n, { given, want }) => {
    expectOrdered(await list(c.f, { ...all, ordering: given }), at(want));
    // One record a page: each page must hold the next record, so equal values never swap between requests.
    for (const [p, i] of want.entries()) {
      const res = await list(c.f, { ordering: given, page_size: '1', page: String(p + 1) });
      expect(res.status).toBe(200);
      expect(res.body.results).toEqual([records[i]]);
    }
  });

  test('no ordering is newest first, ids descending on equal timestamps, as before', async () => {
    const want = sorted(records, '-created_at,-id', kinds);
    expect(want.map((r) => r.id)).toEqual([...records].reverse().map((r) => r.id));
    expectOrdered(await list(c.f, all), want);
    expect((await walk(c.f, {}, records.length)).map((r) => r.id)).toEqual(want.map((r) => r.id));
  });

  test('an explicit id order can be combined with another key and is not appended to', async () => {
    const first = Object.keys(c.fields)[0];
    const want = sorted(records, `-${first},id`, kinds);
    expectOrdered(await list(c.f, { ...all, ordering: `-${first},id` }), want);
  });

  // As the spec says: a field named again, in either direction, counts once, at its first
  // place; keys after id change nothing (id is unique). Each walks its cursor pages too.
  const [first, second] = Object.keys(c.fields);
  const sameAs: [string, { given: string; as: string }][] = [
    ['a field named again the other way', { given: `-${first},${first}`, as: `-${first}` }],
    ['a field named again after another', { given: `${first},-${second},-${first}`, as: `${first},-${second}` }],
    ['keys after id', { given: `-id,${first}`, as: '-id' }],
  ];
  test.each(sameAs)('%s', async (_n, { given, as }) => {
    const want = sorted(records, as, kinds);
    expectOrdered(await list(c.f, { ...all, ordering: given }), want);
    expect((await walk(c.f, { ordering: given }, records.length)).map((r) => r.id)).toEqual(want.map((r) => r.id));
  });

  const unknown: [string, { given: string; bad: string }][] = [
    ['an unknown word', { given: 'foo', bad: 'foo' }],
    ['an unknown descending key before a valid one', { given: `-nope,${Object.keys(c.fields)[0]}`, bad: 'nope' }],
    ['a valid key before an unknown one', { given: `${Object.keys(c.fields)[0]},bogus`, bad: 'bogus' }],
    [`a field of another collection (${c.foreign})`, { given: c.foreign, bad: c.foreign }],
    [`a field of this collection that is not sortable (${c.unsortable})`, { given: `-${c.unsortable}`, bad: c.unsortable }],
    ['a field in another case', { given: Object.keys(c.fields)[0].toUpperCase(), bad: Object.keys(c.fields)[0].toUpperCase() }],
  ];
  test.each(unknown)('ordering by %s is 400 naming ordering and the bad value', async (_n, { given, bad }) => {
    const res = await list(c.f, { ordering: given });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
    expect(res.body.errors).toEqual([{ field: 'ordering', message: expect.stringContaining(bad) }]);
  });
});

describe('tasks priority sorts by rank, not alphabetically', () => {
  // Alphabetically high < low < medium; by rank low < medium < high.
  const rows: [string, { given: string; want: string[] }][] = [
    ['ascending: low, medium, high', { given: 'priority', want: ['low', 'low', 'medium', 'medium', 'high', 'high'] }],
    ['descending: high, medium, low', { given: '-priority', want: ['high', 'high', 'medium', 'medium', 'low', 'low'] }],
  ];
  test.each(rows)('%s', async (_n, { given, want }) => {
    const res = await list(byName.tasks, { ordering: given, page_size: '10' });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: Rec) => r.priority)).toEqual(want);
  });
});
