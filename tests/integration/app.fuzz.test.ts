// Fuzzing from the spec: for every operation, requests generated from its schemas (which must get
// the status the data makes right) and requests broken on purpose (which must get a 4xx problem
// naming the field), against the listening app. Never a 5xx; every answer valid against the spec.
// The model predicts lists (ordering, filters, search, page and cursor pagination), ETags and
// conditional requests, and idempotent creates; some plans send several requests at once.
// FUZZ_REQUESTS sets how many plans (default 2000; each sends one request or more); FUZZ_SEED
// replays a run from the start (on a fresh database, so the same ids come back). A failure is
// reported as found: shrinking would replay requests against a database that the failing run
// already changed; FUZZ_SHRINK=1 tries anyway. FUZZ_SKIP, a regular expression, leaves out the
// plans whose printed form matches it, to look past a known defect while it is being fixed
// (e.g. FUZZ_SKIP='otherCollection' for cursors of another collection).
//
// Where the spec leaves a choice open, the model takes the one a careful client would expect
// on both databases alike, and says so here:
// - Text sorts by code point (UTF-8 byte order), trailing spaces and control characters
//   included: the same order on SQLite and MySQL. `email` sorts ignoring ASCII case (it is
//   unique ignoring case; the email format admits ASCII only).
// - An ordering that names a field twice with both directions (`-title,title`, the spec's own
//   example) breaks ties by id in the direction of the last key written or of the last key that
//   still sorts anything: either reading is accepted.
// - A search term is matched exactly where folding case is the same everywhere (ASCII, or text
//   as written); elsewhere (other alphabets) the model accepts either answer for that record,
//   but checks order, counts and that every record that surely matches is listed.
// - The first ETag of a record is the service's choice; every write adds one to it. Tags compare
//   character by character (RFC 9110): `"01"` is not `"1"`.
import fc from 'fast-check';
import { collections } from '../../src/collections';
import { searchTuning } from '../../src/db/searchTuning';
import { startTestApp, type TestApp } from '../helpers/app';
import { dialect } from '../helpers/db';
import { type CollectionRules, type FilterRule, Model, type SortKind } from '../helpers/fuzz/model';
import { brokenPlan, type Plan, type PlanOptions, racePlan, validPlan, writable } from '../helpers/fuzz/plans';
import { Mismatch, readAll, runPlan, Sender } from '../helpers/fuzz/run';
import { specOperations } from '../helpers/fuzz/spec';

const RUNS = Number(process.env.FUZZ_REQUESTS ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() ^ (Math.random() * 2 ** 31));
const CHECK_EVERY = 250;
const SKIP = process.env.FUZZ_SKIP ? new RegExp(process.env.FUZZ_SKIP) : undefined;

/**
 * What the spec says in words (its guide and its parameters' descriptions) and no schema states,
 * as the collection declarations put it: ranked and decimal fields, filters and ranges. Every
 * filter parameter of a list must be among them, so a filter added to the spec alone fails here.
 */
const SPEC_WORDS = {
  ranked: Object.fromEntries(collections.map((c) => [c.name, [...(c.rankedFields ?? [])]])) as Record<string, string[]>,
  decimal: Object.fromEntries(collections.map((c) => [c.name, [...c.decimalFields]])) as Record<string, string[]>,
  filters: Object.fromEntries(
    collections.map((c) => [
      c.name,
      Object.fromEntries(Object.entries(c.filters ?? {}).map(([param, f]) => [param, { field: f.column, op: f.op }])),
    ]),
  ) as Record<string, Record<string, FilterRule>>,
  ranges: Object.fromEntries(collections.map((c) => [c.name, (c.ranges ?? []).map(([a, b]) => [a, b])])) as Record<
    string,
    [string, string][]
  >,
};
/** List parameters that are not filters. */
const PAGING = ['page', 'page_size', 'cursor', 'search', 'ordering'];

const operations = specOperations();
const lists = operations.filter((op) => op.collection && op.method === 'GET' && !op.path.includes('{') && !op.path.endsWith('/export/'));

function rulesOf(name: string, uniqueFields: readonly string[], searchFields: readonly string[]): CollectionRules {
  const write = operations.find((op) => op.collection === name && op.method === 'POST')!.body!;
  const fields = Object.fromEntries(writable(write));
  const list = lists.find((op) => op.collection === name)!;
  const ordering = list.params.find((p) => p.name === 'ordering')!.schema as { items: { enum: string[] } };
  const ranked = SPEC_WORDS.ranked[name] ?? [];
  const kind = (field: string): SortKind => {
    const s = fields[field];
    if (field === 'id') return 'number';
    if (!s) return 'text'; // created_at, updated_at: RFC 3339 UTC with milliseconds sort as text
    if (ranked.includes(field)) return 'rank';
    if ((SPEC_WORDS.decimal[name] ?? []).includes(field)) return 'decimal';
    if (s.type === 'integer') return 'number';
    if (s.format === 'date') return 'date';
    // Unique ignoring case, and sorted so: the order of ASCII letters ignoring case.
    if (s.format === 'email') return 'folded';
    return 'text';
  };
  const sortable = [...new Set(ordering.items.enum.map((e) => e.replace(/^-/, '')))];
  const filters = SPEC_WORDS.filters[name] ?? {};
  for (const p of list.params.filter((p) => p.in === 'query' && !PAGING.includes(p.name))) {
    if (!filters[p.name]) throw new Error(`the fuzzer's model does not know the ${name} filter ${p.name}: add it to SPEC_WORDS`);
  }
  return {
    fields,
    uniqueFields,
    searchFields,
    sortKinds: Object.fromEntries([...sortable, ...Object.values(filters).map((f) => f.field)].map((f) => [f, kind(f)])),
    ranks: Object.fromEntries(ranked.map((f) => [f, fields[f].enum as string[]])),
    filters,
    ranges: SPEC_WORDS.ranges[name] ?? [],
  };
}

const rules: Record<string, CollectionRules> = Object.fromEntries(
  collections.map((c) => [c.name, rulesOf(c.name, c.uniqueFields, c.searchFields)]),
);

function planOptions(collection: string | undefined): PlanOptions {
  const r = collection ? rules[collection] : undefined;
  return {
    uniqueFields: r?.uniqueFields ?? [],
    searchFields: r?.searchFields ?? [],
    filterFields: Object.fromEntries(
      Object.entries(r?.filters ?? {})
        .filter(([, f]) => f.op !== 'in' && f.op !== 'stock')
        .map(([p, f]) => [p, f.field]),
    ),
    ranges: r?.ranges ?? [],
    cursorBound: ['ordering', 'search', ...Object.keys(r?.filters ?? {})],
  };
}

/** Each operation, valid three times in five; a few races; the service's own operations less often. */
const allPlans: fc.Arbitrary<Plan> = fc.oneof(
  ...operations.map((op) => {
    const o = planOptions(op.collection);
    const ways: fc.WeightedArbitrary<Plan>[] = [{ weight: 30, arbitrary: validPlan(op, o) }];
    const broken = brokenPlan(op, o);
    if (broken) ways.push({ weight: 20, arbitrary: broken });
    const race = racePlan(op);
    if (race) ways.push({ weight: 2, arbitrary: race });
    // Lists carry most of the behaviour (ordering, filters, cursors): they come most often, and
    // creates outnumber deletes, so that lists have records to order, filter and page through.
    const weight = !op.collection
      ? 1
      : (({ list: 10, POST: 8, DELETE: 2 } as Record<string, number>)[op.method === 'GET' && !op.path.includes('{') ? 'list' : op.method] ??
        4);
    return { weight, arbitrary: fc.oneof(...ways) };
  }),
);

const plans = SKIP ? allPlans.filter((p) => !SKIP.test(fc.stringify(p))) : allPlans;

let app: TestApp;
let sender: Sender;
const model = new Model(rules);
beforeAll(async () => {
  app = await startTestApp();
  sender = new Sender(app.url);
});
afterAll(() => app.close());

/** Reads the database through the API and compares it with the model; afterwards they agree. */
async function checkModel(): Promise<void> {
  for (const op of lists) {
    const actual = await readAll(sender, op);
    const want = model.listed(op.collection!);
    model.replaceAll(op.collection!, actual);
    if (JSON.stringify(actual) !== JSON.stringify(want)) {
      throw new Mismatch(
        `${op.collection}: the database does not hold what the answers said (a bad request changed something?)\nwant ${JSON.stringify(want).slice(0, 1500)}\nhave ${JSON.stringify(actual).slice(0, 1500)}`,
      );
    }
  }
}

test(`${RUNS} plans of requests from the spec get the answers the contract gives them`, async () => {
  const skip = SKIP ? ` FUZZ_SKIP='${SKIP.source}'` : '';
  console.log(
    `fuzz (${dialect}): seed ${SEED}, ${RUNS} runs; replay with FUZZ_SEED=${SEED} FUZZ_REQUESTS=${RUNS}${skip} TEST_DB=${dialect} npx jest tests/integration/app.fuzz.test.ts`,
  );
  const started = Date.now();
  let runs = 0;
  let resync = false;
  const property = fc.asyncProperty(plans, async (plan) => {
    // After a failure the model may be wrong; shrinking starts from what the database holds.
    if (resync) await checkModel().catch(() => undefined);
    resync = true;
    // SQLite: every other plan's searches are answered by the token index whenever it can decide
    // them (tokens.ts), the others' never, so that the model judges both indexes on any data.
    searchTuning.tokenShare = runs % 2 === 0 ? 1 : -1;
    await runPlan(plan, model, sender);
    if (++runs % CHECK_EVERY === 0) await checkModel();
    resync = false;
  });
  await fc.assert(property, { seed: SEED, numRuns: RUNS, endOnFailure: process.env.FUZZ_SHRINK !== '1' });
  await checkModel();
  const tallies = [...sender.tallies].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => `${k}: ${n}`);
  console.log(
    `fuzz (${dialect}): ${sender.count} requests in ${((Date.now() - started) / 1000).toFixed(1)}s, seed ${SEED}\n${tallies.join('\n')}`,
  );
  expect(sender.count).toBeGreaterThanOrEqual(RUNS);
}, 600_000);
