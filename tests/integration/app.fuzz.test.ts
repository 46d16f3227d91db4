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
import { tunableSearch } from '../helpers/search';
import { collections } from '../../src/collections';
import type { SearchTuning } from '../../src/search';
import { indexPending } from '../../src/search/sets/indexer';
import { startTestApp, type TestApp } from '../helpers/app';
import { dialect } from '../helpers/db';
import { type CollectionRules, Model } from '../helpers/fuzz/model';
import { brokenPlan, type Plan, type PlanOptions, racePlan, validPlan } from '../helpers/fuzz/plans';
import { collectionRules } from '../helpers/fuzz/rules';
import { Mismatch, readAll, runPlan, Sender } from '../helpers/fuzz/run';
import { specOperations } from '../helpers/fuzz/spec';

const search = tunableSearch();
/** The page strategies: the defaults, ids sorted by the database, the order walked, and every check and sort through the limiter. */
const TUNINGS: Partial<SearchTuning>[] = [
  {},
  { walkPerMatch: 0 },
  { inList: 0 },
  { walkPerMatch: 1e9, inList: 1 },
  { checkedInline: 0, walkPerMatch: 0 },
];

const RUNS = Number(process.env.FUZZ_REQUESTS ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() ^ (Math.random() * 2 ** 31));
const CHECK_EVERY = 250;
const SKIP = process.env.FUZZ_SKIP ? new RegExp(process.env.FUZZ_SKIP) : undefined;

// The model does not follow bulk writes yet: tests/integration/handlers/bulk.test.ts covers them.
const operations = specOperations().filter((op) => !/\/bulk(-delete)?\/$/.test(op.path));
const lists = operations.filter((op) => op.collection && op.method === 'GET' && !op.path.includes('{') && !op.path.endsWith('/export/'));
const rules: Record<string, CollectionRules> = collectionRules(operations);

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
  app = await startTestApp({ search });
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
    // Each plan's searches page by another strategy (list.ts), and every third plan starts with
    // the pending records indexed, so that the model judges the sets and the pending checks alike.
    search.reset();
    search.tune(TUNINGS[runs % TUNINGS.length]);
    if (runs % 3 === 0) for (const c of collections) if (c.searchFields.length) await indexPending(app.database.db, c.name, c.searchFields);
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
