import type { OpenAPIV3 } from 'openapi-types';
import { collections } from '../../../src/collections';
import { startTestApp, type TestApp, type TestResponse } from '../../helpers/app';
import { byName, fixtures, type Fixture } from '../../helpers/fixtures';
import { type ListQuery, Model, type Rec, sameValue } from '../../helpers/fuzz/model';
import { collectionRules } from '../../helpers/fuzz/rules';
import { type Param, specOperations } from '../../helpers/fuzz/spec';

// This file's database holds only the records created below, so a filter's expected result,
// computed from those records by the list model (tests/helpers/fuzz/model.ts), is the whole list
// of matching records, and `count` can be checked exactly. Each collection gets rows from the
// seed and queries derived from its declared filters; the first five add rows and queries of
// their own for the edges (case, trailing spaces, leap days, cents).
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

type Params = Record<string, string>;

interface EdgeCase {
  f: Fixture;
  /** Records by tag, created after the seed's rows. */
  rows: [string, Record<string, unknown>][];
  /** Filters (and searches) whose result the model computes from the rows. */
  filters: [string, { given: Params }][];
  /** Filters whose result spans pages, at the given page_size and ordering. */
  paging: [string, { given: Params }][];
  /** A bad value and the parameters the 400 may name (a range names one of its two ends). */
  bad: [string, { given: Params; names: string[] }][];
}

const EDGE_CASES: EdgeCase[] = [
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
      ['author: exactly this author', { given: { author: 'ann' } }],
      ['author: another case is another author', { given: { author: 'Ann' } }],
      ['author: a longer name is another author', { given: { author: 'anna' } }],
      ['author: a trailing space is part of the name', { given: { author: 'ann ' } }],
      ['author: a prefix matches nobody', { given: { author: 'an' } }],
      ['author: nobody by that name', { given: { author: 'nobody' } }],
      ['author AND search', { given: { author: 'ann', search: 'kite' } }],
      ['author AND a narrower search', { given: { author: 'ann', search: 'two' } }],
      ['author AND a two-term search', { given: { author: 'bob', search: 'red boat' } }],
      ['author AND a search that only other authors match', { given: { author: 'ann', search: 'boat' } }],
      ['search alone is not narrowed by a filter of another collection', { given: { search: 'boat', genre: 'x' } }],
    ],
    paging: [
      ['author, one a page', { given: { author: 'ann', page_size: '1' } }],
      ['author and search, ordered', { given: { author: 'ann', search: 'kite', ordering: 'title', page_size: '2' } }],
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
      ['min_price includes its bound', { given: { min_price: '9.99' } }],
      ['min_price without decimals equals the price with them', { given: { min_price: '10' } }],
      ['min_price one cent above a price leaves it out', { given: { min_price: '10.01' } }],
      ['max_price includes its bound', { given: { max_price: '10.00' } }],
      ['max_price one cent below a price leaves it out', { given: { max_price: '9.99' } }],
      ['max_price 0 keeps free products', { given: { max_price: '0' } }],
      ['min_price 0 keeps everything', { given: { min_price: '0.00' } }],
      ['both bounds, inclusive at both ends', { given: { min_price: '9.99', max_price: '10.01' } }],
      ['equal bounds are one price, not a 400', { given: { min_price: '10', max_price: '10.00' } }],
      ['in_stock=true: stock above 0', { given: { in_stock: 'true' } }],
      ['in_stock=false: stock exactly 0', { given: { in_stock: 'false' } }],
      ['in_stock AND max_price', { given: { in_stock: 'true', max_price: '10.00' } }],
      ['out of stock AND min_price', { given: { in_stock: 'false', min_price: '5' } }],
      ['search AND in_stock', { given: { search: 'bolt', in_stock: 'false' } }],
      ['search AND min_price', { given: { search: 'steel', min_price: '9.99' } }],
      ['search AND every filter', { given: { search: 'steel', min_price: '9.99', max_price: '19.99', in_stock: 'true' } }],
    ],
    paging: [
      ['in_stock=false, one a page', { given: { in_stock: 'false', page_size: '1' } }],
      ['a price range, by price descending', { given: { min_price: '5', max_price: '10.01', ordering: '-price', page_size: '2' } }],
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
      ['genre exact', { given: { genre: 'Fantasy' } }],
      ['genre in another case is another genre', { given: { genre: 'fantasy' } }],
      ['genre: a trailing space is part of the genre', { given: { genre: 'Fantasy ' } }],
      ['genre with punctuation', { given: { genre: 'Sci-Fi' } }],
      ['an empty genre finds books without one', { given: { genre: '' } }],
      ['author exact, not a prefix of a longer name', { given: { author: 'Ada Stone' } }],
      ['author exact, not ignoring a trailing space', { given: { author: 'Ben Reed' } }],
      ['author with a trailing space', { given: { author: 'Ben Reed ' } }],
      ['author AND genre', { given: { author: 'Ben Reed', genre: 'Fantasy' } }],
      ['published_after includes its day and leaves out undated books', { given: { published_after: '2000-01-01' } }],
      ['published_before includes its day and leaves out undated books', { given: { published_before: '2000-01-01' } }],
      ['a one-day range', { given: { published_after: '2000-01-01', published_before: '2000-01-01' } }],
      ['a range ending on a leap day', { given: { published_after: '2000-01-02', published_before: '2000-02-29' } }],
      ['published_before a day before the oldest', { given: { published_before: '1999-12-30' } }],
      ['search AND published_after', { given: { search: 'dark', published_after: '2000-01-01' } }],
      ['search AND genre', { given: { search: 'forest', genre: 'Fantasy' } }],
      ['search AND author AND published_before', { given: { search: 'ada', author: 'Ada Stone', published_before: '2005-01-01' } }],
    ],
    paging: [
      ['published_after, one a page', { given: { published_after: '2000-01-01', page_size: '1' } }],
      ['genre, by published_date', { given: { genre: 'Fantasy', ordering: 'published_date', page_size: '2' } }],
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
      ["other collections' filters are ignored", { given: { author: 'ann', status: 'done', min_price: '5' } }],
      ['search still filters', { given: { search: 'bob', author: 'ann' } }],
    ],
    paging: [['ignored parameters stay in the links', { given: { status: 'done', page_size: '1' } }]],
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
      ['one status', { given: { status: 'todo' } }],
      ['another status', { given: { status: 'in_progress' } }],
      ['two statuses', { given: { status: 'todo,done' } }],
      ['every status', { given: { status: 'done,in_progress,todo' } }],
      ['a status given twice', { given: { status: 'todo,todo' } }],
      ['one priority', { given: { priority: 'high' } }],
      ['two priorities', { given: { priority: 'low,medium' } }],
      ['status AND priority', { given: { status: 'todo', priority: 'low' } }],
      ['several statuses AND several priorities', { given: { status: 'done,in_progress', priority: 'high,medium' } }],
      ['due_after includes its day and leaves out undated tasks', { given: { due_after: '2026-03-01' } }],
      ['due_before includes its day and leaves out undated tasks', { given: { due_before: '2026-03-01' } }],
      ['a one-day range', { given: { due_after: '2026-03-01', due_before: '2026-03-01' } }],
      ['a range across the end of February', { given: { due_after: '2026-02-28', due_before: '2026-03-01' } }],
      ['due_before a day before the earliest', { given: { due_before: '2025-12-31' } }],
      ['search AND several statuses', { given: { search: 'fix', status: 'todo,done' } }],
      ['search AND priority', { given: { search: 'docs', priority: 'medium' } }],
      ['search AND due_after AND priority', { given: { search: 'fix', due_after: '2026-02-01', priority: 'low' } }],
    ],
    paging: [
      ['two statuses, one a page', { given: { status: 'todo,done', page_size: '1' } }],
      // Equal priorities break by id descending, like the last key.
      ['two statuses by priority descending', { given: { status: 'todo,done', ordering: '-priority', page_size: '2' } }],
      [
        'search, priorities and a date range',
        {
          given: { search: 'fix', priority: 'high,low', due_after: '2026-01-01', due_before: '2026-03-01', page_size: '1' },
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

const rules = collectionRules();
const operations = specOperations();
/** Rows from the seed, before each collection's edge rows. */
const SEED_ROWS = 8;

function listParams(name: string): Param[] {
  return operations.find((op) => op.collection === name && op.method === 'GET' && !op.path.includes('{'))!.params;
}

/** A list query as the model reads it: lists split, booleans as booleans, search split into terms. */
function modelQuery(name: string, given: Params): ListQuery {
  const filters: Record<string, unknown> = {};
  for (const [param, value] of Object.entries(given)) {
    const rule = rules[name].filters[param];
    if (!rule) continue;
    filters[param] = rule.op === 'in' ? value.split(',') : rule.op === 'stock' ? value === 'true' : value;
  }
  const terms = (given.search ?? '').split(/[\s,]+/).filter(Boolean);
  return { ordering: given.ordering?.split(','), filters, terms };
}

/** The records a query must answer, in order, from the model holding every record created. */
function expected(model: Model, name: string, given: Params): Rec[] {
  const prediction = model.predict(name, modelQuery(name, given));
  // The rows are ASCII, so the model can tell every match; a case it cannot decide is a bad row.
  if (!prediction.exact) throw new Error(`the model cannot decide ${JSON.stringify(given)} on ${name}: keep the rows ASCII`);
  return prediction.orders[0];
}

/** The values a field takes in the rows, without nulls, in the field's sort order. */
function valuesOf(model: Model, name: string, bodies: Record<string, unknown>[], field: string): string[] {
  const compare = model.comparator(name, [{ field, desc: false }]);
  const values = [...new Set(bodies.map((b) => b[field]).filter((v) => v !== null && v !== undefined))].map(String);
  return values.sort((a, b) => compare({ [field]: a }, { [field]: b }));
}

/** Queries for every declared filter, with values taken from the rows: lowest, middle, highest. */
function derivedFilters(name: string, bodies: Record<string, unknown>[]): [string, { given: Params }][] {
  const r = rules[name];
  const model = new Model(rules);
  const out: [string, { given: Params }][] = [];
  const term = String((bodies[0][r.searchFields[0]] as string | undefined) ?? '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .find((w) => w.length >= 3);
  for (const [param, rule] of Object.entries(r.filters)) {
    let values: string[];
    if (rule.op === 'in') {
      const allowed = r.fields[rule.field].enum as string[];
      values = [allowed[0], allowed.slice(0, 2).join(','), allowed.join(',')];
    } else if (rule.op === 'stock') values = ['true', 'false'];
    else {
      const seen = valuesOf(model, name, bodies, rule.field);
      values = [...new Set([seen[0], seen[Math.floor(seen.length / 2)], seen[seen.length - 1]])];
      // A value no row holds: a prefix of one (text), or past the highest (numbers, dates).
      if (rule.op === 'eq' && seen[0].length > 1) values.push(seen[0].slice(0, -1));
    }
    for (const value of values) out.push([`${param}=${value}`, { given: { [param]: value } }]);
    if (term)
      out.push([`${param}=${values[1] ?? values[0]} AND search=${term}`, { given: { [param]: values[1] ?? values[0], search: term } }]);
  }
  for (const [low, high] of r.ranges) {
    const seen = valuesOf(model, name, bodies, r.filters[low].field);
    const mid = seen[Math.floor(seen.length / 2)];
    out.push([`${low} and ${high} both ${mid}`, { given: { [low]: mid, [high]: mid } }]);
    out.push([`${low}=${seen[1]} and ${high}=${seen[seen.length - 2]}`, { given: { [low]: seen[1], [high]: seen[seen.length - 2] } }]);
  }
  // A filter of another collection is an unknown parameter here: ignored.
  const foreign = collections.flatMap((c) => Object.keys(c.filters ?? {})).find((p) => !(p in r.filters));
  if (foreign) out.push([`${foreign}, a filter of another collection, is ignored`, { given: { [foreign]: 'x' } }]);
  return out;
}

/** Values each filter parameter's schema refuses, derived from the schema. */
function derivedBad(name: string, bodies: Record<string, unknown>[]): [string, { given: Params; names: string[] }][] {
  const r = rules[name];
  const out: [string, { given: Params; names: string[] }][] = [];
  for (const param of Object.keys(r.filters)) {
    const s = listParams(name).find((p) => p.name === param)!.schema;
    const items = s.type === 'array' ? (s.items as OpenAPIV3.SchemaObject) : undefined;
    const bad: string[] = [];
    if (items?.enum) bad.push('nope', `${String(items.enum[0])},nope`);
    else if (s.type === 'boolean') bad.push('maybe');
    else if (s.type === 'integer' || s.type === 'number') bad.push('abc');
    else if (s.format === 'date') bad.push('2026-02-30', '2026-1-1');
    else {
      if (s.pattern && !new RegExp(s.pattern).test('abc')) bad.push('abc');
      if (s.maxLength !== undefined) bad.push('x'.repeat(s.maxLength + 1));
      if (s.minLength) bad.push('');
    }
    for (const value of bad)
      out.push([
        `${param}=${value.length > 12 ? `${value.slice(0, 2)}×${value.length}` : JSON.stringify(value)}`,
        { given: { [param]: value }, names: [param] },
      ]);
  }
  const model = new Model(rules);
  for (const [low, high] of r.ranges) {
    const seen = valuesOf(model, name, bodies, r.filters[low].field);
    out.push([`${low} above ${high}`, { given: { [low]: seen[seen.length - 1], [high]: seen[0] }, names: [low, high] }]);
  }
  return out;
}

interface Case extends Omit<EdgeCase, 'rows'> {
  /** Create bodies, by tag. */
  rows: [string, Record<string, unknown>][];
}

const edgeCases = new Map(EDGE_CASES.map((c) => [c.f.name, c]));
const cases: Case[] = fixtures.map((f) => {
  const seeded = f.rows(SEED_ROWS);
  const edge = edgeCases.get(f.name);
  const rows: Case['rows'] = [
    ...seeded.map((body, i) => [`S${i + 1}`, body] as [string, Record<string, unknown>]),
    ...(edge?.rows ?? []).map(([tag, fields], i) => [tag, { ...f.valid(i + 1), ...fields }] as [string, Record<string, unknown>]),
  ];
  const bodies = rows.map(([, b]) => b);
  const first = rules[f.name].sortable.find((field) => !['id', 'created_at', 'updated_at'].includes(field)) ?? 'id';
  const filters = [...(edge?.filters ?? []), ...derivedFilters(f.name, bodies)];
  return {
    f,
    rows,
    filters,
    // Every filter again across pages of two, by a field of the collection descending.
    paging: [
      ...(edge?.paging ?? []),
      ...derivedFilters(f.name, bodies).map(
        ([label, { given }]) =>
          [`${label}, by -${first}`, { given: { ...given, ordering: `-${first}`, page_size: '2' } }] as [string, { given: Params }],
      ),
    ],
    bad: [...(edge?.bad ?? []), ...derivedBad(f.name, bodies)],
  };
});

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

describe.each(cases.map((c) => [c.f.name, c] as const))('%s', (name, c) => {
  const byTag = new Map<string, Rec>();
  // The model holds every record this file created in this collection, as the service answered it.
  const model = new Model(rules);
  const want = (given: Params) => expected(model, name, given);

  beforeAll(async () => {
    for (const [tag, body] of c.rows) {
      const res = await app.request('POST', `/api/${name}/`, { body });
      expect(res.status).toBe(201);
      // Stored as sent: the filters below rely on the exact values (a trailing space, a case).
      for (const [field, value] of Object.entries(body)) expect([field, sameValue(value, res.body[field])]).toEqual([field, true]);
      byTag.set(tag, res.body);
      model.set(name, res.body, 1);
    }
  });

  // One page holds the whole dataset where the page size allows (posts: 10 a page).
  const size = Math.min(c.rows.length, c.f.maxPageSize);

  test('without filters the list holds the whole dataset', async () => {
    const res = await list(c.f, { page_size: String(size) });
    expect(res.body).toMatchObject({ count: c.rows.length, previous: null, results: want({}).slice(0, size) });
  });

  test.each(c.filters)('%s', async (_n, { given }) => {
    const res = await list(c.f, { ...given, page_size: String(size) });
    expect(res.status).toBe(200);
    const wanted = want(given);
    expect(res.body).toMatchObject({ count: wanted.length, previous: null, results: wanted.slice(0, size) });
    expect(res.body.next === null).toBe(wanted.length <= size);
  });

  test('each filter keeps some records and leaves out others', () => {
    for (const param of Object.keys(rules[name].filters)) {
      const sizes = c.filters.filter(([, { given }]) => param in given).map(([, { given }]) => want(given).length);
      expect({ param, narrows: sizes.some((n) => n > 0 && n < c.rows.length) }).toEqual({ param, narrows: true });
    }
  });

  test.each(c.paging)('pages keep the filter: %s', async (_n, { given }) => {
    const size = Number(given.page_size);
    const wanted = want(given);
    const lastPage = Math.max(1, Math.ceil(wanted.length / size));
    // Forward through `next`: every page counts the filtered list and links with the same filter.
    let res = await list(c.f, given);
    for (let page = 1; ; page++) {
      expect(res.status).toBe(200);
      expect(res.body.count).toBe(wanted.length);
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
      expect(res.body.count).toBe(wanted.length);
      expect(res.body.results).toEqual(wanted.slice((page - 1) * size, page * size));
    }
    expect(res.body.previous).toBeNull();
  });

  if (c.bad.length) {
    test.each(c.bad)('%s is 400 naming the parameter', async (_n, { given, names }) => {
      const res = await list(c.f, given);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ type: '/problems/validation', title: 'Invalid request', status: 400, detail: expect.any(String) });
      expect(res.body.errors.length).toBeGreaterThan(0);
      for (const e of res.body.errors) {
        expect(names).toContain(e.field);
        expect(e.message).toEqual(expect.any(String));
      }
    });
  }
});
