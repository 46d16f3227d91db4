// Fuzzing from the spec: for every operation, requests generated from its schemas (which must get
// the status the data makes right) and requests broken on purpose (which must get a 4xx problem
// naming the field), against the listening app. Never a 5xx; every answer valid against the spec.
// FUZZ_REQUESTS sets how many (default 2000); FUZZ_SEED replays a run from the start (on a fresh
// database, so the same ids come back). A failure is reported as found: shrinking would replay
// requests against a database that the failing run already changed; FUZZ_SHRINK=1 tries anyway.
import fc from 'fast-check';
import { collections } from '../src/collections';
import { startTestApp, type TestApp } from './helpers/app';
import { dialect } from './helpers/db';
import { type CollectionRules, Model } from './helpers/fuzz/model';
import { brokenPlan, type Plan, validPlan } from './helpers/fuzz/plans';
import { Mismatch, readAll, runPlan, Sender } from './helpers/fuzz/run';
import { type Schema, specOperations } from './helpers/fuzz/spec';

const RUNS = Number(process.env.FUZZ_REQUESTS ?? 2000);
const SEED = Number(process.env.FUZZ_SEED ?? (Date.now() ^ (Math.random() * 2 ** 31)));
const CHECK_EVERY = 250;

const operations = specOperations();
const rules: Record<string, CollectionRules> = Object.fromEntries(
  collections.map((c) => {
    const write = operations.find((op) => op.collection === c.name && op.method === 'POST')!.body!;
    const fields = Object.fromEntries(Object.entries(write.properties ?? {}).filter(([, p]) => !(p as Schema).readOnly)) as Record<string, Schema>;
    return [c.name, { fields, uniqueFields: c.uniqueFields, searchFields: c.searchFields }];
  }),
);
const lists = operations.filter((op) => op.collection && op.method === 'GET' && !op.path.includes('{'));

/** Each operation, valid three times in five; the service's own operations less often. */
const plans: fc.Arbitrary<Plan> = fc.oneof(
  ...operations.map((op) => {
    const valid = validPlan(op, rules[op.collection ?? ''] ?? { uniqueFields: [], searchFields: [] });
    const broken = brokenPlan(op);
    const arbitrary = broken ? fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: broken }) : valid;
    return { weight: op.collection ? 5 : 1, arbitrary };
  }),
);

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
      throw new Mismatch(`${op.collection}: the database does not hold what the answers said (a bad request changed something?)\nwant ${JSON.stringify(want).slice(0, 1500)}\nhave ${JSON.stringify(actual).slice(0, 1500)}`);
    }
  }
}

test(`${RUNS} requests from the spec get the answers the contract gives them`, async () => {
  console.log(`fuzz (${dialect}): seed ${SEED}, ${RUNS} runs; replay with FUZZ_SEED=${SEED} FUZZ_REQUESTS=${RUNS} TEST_DB=${dialect} npx jest tests/app.fuzz.test.ts`);
  const started = Date.now();
  let runs = 0;
  let resync = false;
  const property = fc.asyncProperty(plans, async (plan) => {
    // After a failure the model may be wrong; shrinking starts from what the database holds.
    if (resync) await checkModel().catch(() => undefined);
    resync = true;
    await runPlan(plan, model, sender);
    if (++runs % CHECK_EVERY === 0) await checkModel();
    resync = false;
  });
  await fc.assert(property, { seed: SEED, numRuns: RUNS, endOnFailure: process.env.FUZZ_SHRINK !== '1' });
  await checkModel();
  const tallies = [...sender.tallies].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => `${k}: ${n}`);
  console.log(`fuzz (${dialect}): ${sender.count} requests in ${((Date.now() - started) / 1000).toFixed(1)}s, seed ${SEED}\n${tallies.join('\n')}`);
  expect(sender.count).toBeGreaterThanOrEqual(RUNS);
}, 600_000);
