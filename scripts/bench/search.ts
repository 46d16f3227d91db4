// `DATABASE_URL=... npx tsx scripts/bench/search.ts [--runs 20]`: search scenarios over the
// posts of the realistic corpus (corpus.ts; load it with corpus-file.ts and `npm run import`):
// page 1 with its count, as the list handler runs it, through the index where the database
// has one, against the scan of the same terms (the baseline), plus a cursor-mode page.
// One client, in process: it times the database work, not HTTP.
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config';
import { openDb, type Db } from '../../src/db/connection';
import { listRecords, seekRecords } from '../../src/db/records';
import type { OrderKey } from '../../src/db/order';
import { applySearch, foldCollation, parseSearch } from '../../src/db/search';
import { vocabulary } from './corpus';

const words = vocabulary();
const accented = words.slice(2000).find((w) => /[éèêàôîûë]/.test(w) && w.length >= 6)!;
export const SCENARIOS: [string, string][] = [
  ['rare term', words[25000]],
  ['medium term', words[1500]],
  ['two terms', `${words[800]} ${words[3000]}`],
  ['phrase', '"and the"'],
  ['substring inside words', 'ouplip'],
  ['upper-case accented term', accented.toUpperCase()],
  ['very common term', 'the'],
];

const spec = { table: 'posts', searchFields: ['title', 'content'] };
const order = [
  { column: 'created_at', desc: true },
  { column: 'id', desc: true },
] as unknown as OrderKey[];

async function time<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = process.hrtime.bigint();
  const out = await fn();
  return [Number(process.hrtime.bigint() - t) / 1e6, out];
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

async function scan(db: Db, terms: string[]): Promise<number> {
  const q = db('posts');
  applySearch(q, spec.searchFields, terms, await foldCollation(db));
  const [{ n }] = await q.clone().count({ n: '*' });
  await q
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(10);
  return Number(n);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '20' },
      'no-scan': { type: 'boolean', default: false },
      skip: { type: 'string', default: '0' },
    },
  });
  const runs = Number(values.runs);
  const db = openDb(loadConfig().database);
  console.log('| scenario | search | rows | index p50 ms | index p99 ms | scan ms | scan ÷ index p50 |');
  console.log('|---|---|--:|--:|--:|--:|--:|');
  try {
    for (const [name, search] of SCENARIOS.slice(Number(values.skip))) {
      const terms = parseSearch(search);
      const times: number[] = [];
      let count = 0;
      for (let r = 0; r < runs; r++) {
        const [ms, res] = await time(() => listRecords(db, spec, { terms, filters: [], order, page: 1, pageSize: 10 }));
        times.push(ms);
        count = res.count;
      }
      const [scanMs, scanCount] = values['no-scan'] ? [NaN, count] : await time(() => scan(db, terms));
      if (scanCount !== count) throw new Error(`${name}: index counted ${count}, scan ${scanCount}`);
      const p50 = pct(times, 50);
      console.log(
        `| ${name} | \`${search}\` | ${count.toLocaleString('en')} | ${p50.toFixed(1)} | ${pct(times, 99).toFixed(1)} | ${scanMs.toFixed(0)} | ${(scanMs / p50).toFixed(0)}x |`,
      );
    }
    const terms = parseSearch(SCENARIOS[1][1]);
    const times: number[] = [];
    for (let r = 0; r < runs; r++)
      times.push((await time(() => seekRecords(db, spec, { terms, filters: [], order, backward: false, limit: 11 })))[0]);
    console.log(
      `| cursor-mode page 1 | \`${SCENARIOS[1][1]}\` | (no count) | ${pct(times, 50).toFixed(1)} | ${pct(times, 99).toFixed(1)} | | |`,
    );
  } finally {
    await db.destroy();
  }
}

if (require.main === module) void main();
