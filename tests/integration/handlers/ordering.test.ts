import { collections } from '../../../src/collections';
import { startTestApp, type TestApp, type TestResponse } from '../../helpers/app';
import { fixtures, type Fixture } from '../../helpers/fixtures';
import { Model, type Rec } from '../../helpers/fuzz/model';
import { collectionRules } from '../../helpers/fuzz/rules';

// This file's database holds only the records created below, so every list here is the whole
// dataset of its collection, and every expected order is computed from those records by the list
// model (tests/helpers/fuzz/model.ts), from the fields the spec's `ordering` enum names and how
// each sorts (the declaration's ranked and decimal fields, the schema's types).
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const rules = collectionRules();
const COMMON = ['id', 'created_at', 'updated_at'];
/** Rows from the seed, before each collection's edge rows; rows 1 and 3 share every value that may repeat. */
const SEED_ROWS = 4;

interface EdgeCase {
  /** Values at the edges of a field's order (a price written two ways, equal titles), created after the seed's rows. */
  rows: Record<string, unknown>[];
  /** Multi-key orderings worth naming beside the derived ones. */
  multi: string[];
}

// Text values are lower-case ASCII so that "binary" and "ignoring case" orders agree on both
// databases (users.email is compared ignoring case); the spec does not order mixed case.
const EDGE_CASES: Record<string, EdgeCase> = {
  posts: {
    rows: [
      { title: 'delta', author: 'kim' },
      { title: 'alpha', author: 'lee' },
      { title: 'charlie', author: 'kim' },
      { title: 'alpha', author: 'ann' },
      { title: 'bravo', author: 'lee' },
      { title: 'echo', author: 'ann' },
    ],
    multi: ['author,-title', 'title,author'],
  },
  products: {
    rows: [
      { name: 'widget', price: '10.00', stock: 5 },
      { name: 'bolt', price: '9.50', stock: 10 },
      { name: 'anchor', price: '100.00', stock: 0 },
      { name: 'bolt', price: '10.00', stock: 2 },
      { name: 'clamp', price: '0.99', stock: 10 },
      { name: 'drill', price: '10', stock: 5 },
    ],
    multi: ['-price,name', '-stock,price'],
  },
  books: {
    rows: [
      { title: 'moby', author: 'melville', published_date: '1999-12-31' },
      { title: 'dune', author: 'herbert', published_date: '2001-01-01' },
      { title: 'emma', author: 'austen', published_date: '1999-12-31' },
      { title: 'dune', author: 'austen', published_date: '1850-06-15' },
      { title: 'ulysses', author: 'joyce', published_date: '2020-02-29' },
      { title: 'beloved', author: 'herbert', published_date: '2001-01-01' },
    ],
    multi: ['author,-published_date', '-published_date,title'],
  },
  users: {
    rows: [
      { username: 'carol', email: 'mail.a@example.com', last_name: 'smith' },
      { username: 'alice', email: 'mail.d@example.com', last_name: 'jones' },
      { username: 'erin', email: 'mail.b@example.com', last_name: 'smith' },
      { username: 'bob', email: 'mail.f@example.com', last_name: 'brown' },
      { username: 'dave', email: 'mail.c@example.com', last_name: 'jones' },
      { username: 'frank', email: 'mail.e@example.com', last_name: 'adams' },
    ],
    multi: ['last_name,-username', '-last_name,email'],
  },
  tasks: {
    rows: [
      { title: 'write', status: 'todo', priority: 'high', due_date: '2026-03-01' },
      { title: 'plan', status: 'done', priority: 'low', due_date: '2026-01-15' },
      { title: 'test', status: 'in_progress', priority: 'medium', due_date: '2026-03-01' },
      { title: 'plan', status: 'todo', priority: 'low', due_date: '2025-12-31' },
      { title: 'ship', status: 'in_progress', priority: 'high', due_date: '2026-02-01' },
      { title: 'review', status: 'done', priority: 'medium', due_date: '2026-02-01' },
    ],
    multi: ['-priority,due_date', 'status,-priority,title'],
  },
};

interface Case {
  f: Fixture;
  /** The collection's own sortable fields (the ordering enum's, beside id and the timestamps). */
  own: string[];
  /** Create bodies, in creation order (so index order is id order). */
  rows: Record<string, unknown>[];
  multi: string[];
  /** A field with equal values in two records, if any field may repeat. */
  tie?: string;
  /** Names that are not sortable here: a sortable field of another collection, and a field of this one. */
  foreign?: string;
  unsortable?: string;
}

const cases: Case[] = fixtures.map((f) => {
  const r = rules[f.name];
  const own = r.sortable.filter((field) => !COMMON.includes(field));
  const repeatable = own.filter((field) => !r.uniqueFields.includes(field));
  const seeded = f.rows(SEED_ROWS);
  for (const field of repeatable) {
    const allowed = r.fields[field].enum as string[] | undefined;
    // Every value of an enum, so that a rank order and a text order tell apart.
    if (allowed) seeded.forEach((row, i) => (row[field] = allowed[i % allowed.length]));
    seeded[3][field] = seeded[1][field];
  }
  const edge = EDGE_CASES[f.name];
  const multi = [
    own.length >= 2 ? `${own[1]},-${own[0]}` : undefined,
    own.length >= 2 ? `-${own[0]},${own[1]}` : undefined,
    own.length >= 3 ? `${own[2]},-${own[1]},${own[0]}` : undefined,
    ...(edge?.multi ?? []),
  ].filter((m): m is string => m !== undefined);
  const clientFields = Object.keys(r.fields);
  return {
    f,
    own,
    rows: [...seeded, ...(edge?.rows ?? []).map((row, i) => ({ ...f.valid(i + 1), ...row }))],
    multi: [...new Set(multi)],
    tie: repeatable[0],
    foreign: Object.values(rules)
      .flatMap((other) => other.sortable)
      .find((field) => !r.sortable.includes(field) && !clientFields.includes(field)),
    unsortable: clientFields.find((field) => !r.sortable.includes(field)),
  };
});

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(cases.map((c) => [c.f.name, c] as const))('%s', (name, c) => {
  const model = new Model(rules);
  let records: Rec[]; // as served after setup, index = creation order
  const size = Math.min(c.rows.length, c.f.maxPageSize);
  const first = c.own[0] ?? 'id';
  const second = c.own[1] ?? 'created_at';
  /** The order an ordering defines: its keys, then id in the direction of the last key. */
  const sorted = (ordering: string) => [...records].sort(model.comparator(name, model.sortKeys(ordering.split(','))[0]));

  /** Page 1 holds the first records of the order, and pages of two, followed by `next`, all of it. */
  async function expectOrdered(ordering: string | undefined, want: Rec[]): Promise<void> {
    const params: Record<string, string> = ordering === undefined ? {} : { ordering };
    const res = await list(c.f, { ...params, page_size: String(size) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ count: want.length, previous: null, results: want.slice(0, size) });
    expect((await walk(c.f, params, records.length)).map((r) => r.id)).toEqual(want.map((r) => r.id));
  }

  beforeAll(async () => {
    const created: Rec[] = [];
    for (const row of c.rows) {
      const res = await app.request('POST', `/api/${name}/`, { body: row });
      expect(res.status).toBe(201);
      created.push(res.body);
    }
    // Rewrite two older records (to their own values) so that updated_at order differs from
    // created_at order; otherwise ordering by either would pass by accident.
    for (const i of [2, 0]) {
      await sleep(3);
      const res = await app.request('PATCH', `/api/${name}/${created[i].id}/`, { body: { [first]: created[i][first] } });
      expect(res.status).toBe(200);
    }
    records = [];
    for (const r of created) records.push((await app.request('GET', `/api/${name}/${r.id}/`)).body);
  });

  test('the dataset is what the expectations assume (ids ascend in creation order, ties where named)', () => {
    expect(records.map((r) => r.id)).toEqual([...records.map((r) => r.id)].sort((a, b) => a - b));
    expect(
      sorted('updated_at')
        .slice(-2)
        .map((r) => r.id),
    ).toEqual([records[2].id, records[0].id]);
    if (c.tie) expect(records[3][c.tie]).toEqual(records[1][c.tie]);
  });

  const singles: [string, { given: string }][] = rules[name].sortable.flatMap((field) => [
    [`${field} ascending`, { given: field }],
    [`${field} descending`, { given: `-${field}` }],
  ]);
  test.each(singles)('ordering by %s', async (_n, { given }) => {
    await expectOrdered(given, sorted(given));
  });

  test.each(c.multi.map((given) => [given, { given }] as const))('multi-key ordering %s', async (_n, { given }) => {
    await expectOrdered(given, sorted(given));
  });

  if (c.tie) {
    const tie = c.tie;
    test.each([
      [`${tie}: equal values ascend by id`, { given: tie }],
      [`-${tie}: equal values descend by id`, { given: `-${tie}` }],
    ])('tie-break %s', async (_n, { given }) => {
      const want = sorted(given);
      await expectOrdered(given, want);
      // One record a page: each page must hold the next record, so equal values never swap between requests.
      for (const [p, record] of want.entries()) {
        const res = await list(c.f, { ordering: given, page_size: '1', page: String(p + 1) });
        expect(res.status).toBe(200);
        expect(res.body.results).toEqual([record]);
      }
    });
  }

  test('no ordering is newest first, ids descending on equal timestamps, as before', async () => {
    const want = sorted('-created_at,-id');
    expect(want.map((r) => r.id)).toEqual([...records].reverse().map((r) => r.id));
    await expectOrdered(undefined, want);
  });

  test('an explicit id order can be combined with another key and is not appended to', async () => {
    await expectOrdered(`-${first},id`, sorted(`-${first},id`));
  });

  // As the spec says: a field named again, in either direction, counts once, at its first
  // place; keys after id change nothing (id is unique). Each walks its cursor pages too.
  const sameAs: [string, { given: string; as: string }][] = [
    ['a field named again the other way', { given: `-${first},${first}`, as: `-${first}` }],
    ['a field named again after another', { given: `${first},-${second},-${first}`, as: `${first},-${second}` }],
    ['keys after id', { given: `-id,${first}`, as: '-id' }],
  ];
  test.each(sameAs)('%s', async (_n, { given, as }) => {
    await expectOrdered(given, sorted(as));
  });

  const unknown: [string, { given: string; bad: string }][] = [
    ['an unknown word', { given: 'foo', bad: 'foo' }],
    ['an unknown descending key before a valid one', { given: `-nope,${first}`, bad: 'nope' }],
    ['a valid key before an unknown one', { given: `${first},bogus`, bad: 'bogus' }],
    ...(c.foreign
      ? [[`a field of another collection (${c.foreign})`, { given: c.foreign, bad: c.foreign }] as [string, { given: string; bad: string }]]
      : []),
    ...(c.unsortable
      ? [
          [`a field of this collection that is not sortable (${c.unsortable})`, { given: `-${c.unsortable}`, bad: c.unsortable }] as [
            string,
            { given: string; bad: string },
          ],
        ]
      : []),
    ['a field in another case', { given: first.toUpperCase(), bad: first.toUpperCase() }],
  ];
  test.each(unknown)('ordering by %s is 400 naming ordering and the bad value', async (_n, { given, bad }) => {
    const res = await list(c.f, { ordering: given });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ type: '/problems/validation', title: 'Invalid request', status: 400 });
    expect(res.body.errors).toEqual([{ field: 'ordering', message: expect.stringContaining(bad) }]);
  });
});

// A ranked field sorts by its enum's order in the spec, not alphabetically (tasks' priority:
// alphabetically high < low < medium; by rank low < medium < high).
const ranked = collections.flatMap((col) =>
  (col.rankedFields ?? []).map((field) => [`${col.name}.${field}`, { c: cases.find((x) => x.f.name === col.name)!, field }] as const),
);
describe.each(ranked)('%s sorts by rank, not alphabetically', (_name, { c, field }) => {
  const order = rules[c.f.name].ranks[field];
  const alphabetical = [...order].sort();
  test.each([
    ['ascending', { given: field, want: order }],
    ['descending', { given: `-${field}`, want: [...order].reverse() }],
  ])('%s', async (_n, { given, want }) => {
    const res = await list(c.f, { ordering: given, page_size: String(Math.min(c.rows.length, c.f.maxPageSize)) });
    expect(res.status).toBe(200);
    const values = (res.body.results as Rec[]).map((r) => r[field] as string);
    // Each value's run, in order: the values with their repeats collapsed.
    expect(values.filter((v, i) => v !== values[i - 1])).toEqual(want.filter((v) => values.includes(v)));
    if (alphabetical.join() !== order.join()) expect(new Set(values).size).toBeGreaterThan(1);
  });
});
