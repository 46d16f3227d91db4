// The benchmark's databases: one per row count, seeded once and reused while it still holds
// exactly the generated posts. Rows that a run's create scenario adds are removed again.
import { migrate } from '../../src/schema';
import { parseDatabaseUrl } from '../../src/config';
import { ensureMysqlDatabase, openDb, type Db } from '../../src/db/connection';
import { rowSource, type Value } from '../seed/data';
import { DEFAULT_SEED, rowCount, seedCollection } from '../seed/index';
import { progressBar } from '../seed/progress';

export interface BenchDatabase {
  url: string;
  db: Db;
  rows: number;
  /** Seconds spent seeding in this run (0 when the database was already seeded). */
  seedSeconds: number;
}

export async function prepareDatabase(url: string, rows: number): Promise<BenchDatabase> {
  const config = parseDatabaseUrl(url);
  await ensureMysqlDatabase(config);
  const db = openDb(config);
  await migrate(db);
  await removeWrites(db, rows);
  let seedSeconds = 0;
  if (!(await holdsSeed(db, rows))) {
    const bar = progressBar(`seeding ${rows.toLocaleString('en')} posts`, rows);
    const started = process.hrtime.bigint();
    await seedCollection(db, 'posts', rows, { reset: true, onProgress: (n) => bar.update(n) });
    bar.update(rows);
    bar.finish();
    seedSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  }
  return { url, db, rows, seedSeconds };
}

/** Removes what create and patch scenarios wrote (they only touch ids above the seeded ones). */
export async function removeWrites(db: Db, rows: number): Promise<void> {
  await db('posts').where('id', '>', rows).delete();
  await db.raw('ALTER TABLE posts AUTO_INCREMENT = ?', [rows + 1]);
}

/** True when the table holds exactly the generated posts: their number, and samples compared. */
async function holdsSeed(db: Db, rows: number): Promise<boolean> {
  if ((await rowCount(db, 'posts')) !== rows) return false;
  const source = rowSource('posts', rows, DEFAULT_SEED);
  for (const i of [0, Math.floor(rows / 2), rows - 1]) {
    const expected = source.row(i);
    const found = await db<Record<string, Value>>('posts')
      .where({ id: i + 1 })
      .first();
    if (!found || source.columns.some((c, k) => String(found[c]) !== String(expected[k]))) return false;
  }
  return true;
}

/**
 * Waits until no query of this database is running, so that queries a server still had in
 * flight when its measurement ended do not slow the next measurement down.
 */
export async function waitForQuiet(db: Db, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [rows] = await db.raw<[{ n: number | string }[]]>(
      "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND COMMAND = 'Query' AND ID <> CONNECTION_ID()",
    );
    if (Number(rows[0].n) === 0 || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function serverVersion(db: Db): Promise<string> {
  const [rows] = await db.raw<[{ v: string }[]]>('SELECT VERSION() AS v');
  return String(rows[0].v);
}

export interface QueryTimes {
  countMs: number;
  pageMs: number;
  countPlan: string;
}

/** A row of MySQL's EXPLAIN, as far as the report reads it. */
interface ExplainRow {
  type: string | null;
  key: string | null;
  rows: number | string | null;
  Extra: string | null;
}

/** What the database alone spends on list page 1: the COUNT(*) and the page query (median of 5). */
export async function listPageQueryTimes(db: Db): Promise<QueryTimes> {
  const median = async (run: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let k = 0; k < 5; k++) {
      const t = process.hrtime.bigint();
      await run();
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    return times.sort((a, b) => a - b)[2];
  };
  const count = () => db('posts').count({ n: '*' });
  const page = () =>
    db('posts')
      .select('*')
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(10);
  const [plan] = await db.raw<[ExplainRow[]]>('EXPLAIN SELECT COUNT(*) AS n FROM posts');
  const p = plan[0];
  return {
    countMs: await median(count),
    pageMs: await median(page),
    countPlan: `type=${p.type}, key=${p.key}, rows≈${Number(p.rows).toLocaleString('en')}, ${p.Extra}`,
  };
}
