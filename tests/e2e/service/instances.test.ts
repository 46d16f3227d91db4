import { type Db, openDb } from '../../../src/db/connection';
import { createTestDatabase, dropTestDatabase, freshConfig } from '../../helpers/db';
import { databaseUrl, type RunningService, startService } from '../../helpers/service';

// The real entry point as an operator runs it: a child process configured by its environment.

const START_TIMEOUT_MS = 30_000;
const running = new Set<RunningService>();

/** Both start at once: each call spawns its process before it waits for the `listening` line. */
async function startTwo(env: Record<string, string>): Promise<RunningService[]> {
  const started = await Promise.allSettled([startService(env, START_TIMEOUT_MS), startService(env, START_TIMEOUT_MS)]);
  for (const s of started) if (s.status === 'fulfilled') running.add(s.value);
  return started.map((s) => {
    if (s.status === 'rejected') throw s.reason;
    return s.value;
  });
}

afterEach(async () => {
  // A test that failed half-way must not leave a service running.
  await Promise.all([...running].map((service) => service.stop('SIGKILL')));
  running.clear();
});

describe('two instances started at once on a fresh database', () => {
  test(
    'both serve, and the schema is migrated once',
    async () => {
      const config = freshConfig();
      // What one instance alone records, to compare the racing pair with.
      const reference = await createTestDatabase();
      let db: Db | undefined;
      try {
        const env = { PORT: '0', DATABASE_URL: databaseUrl(config) };
        const runs = await startTwo(env);
        const urls = runs.map((run) => `${run.url}/`);
        expect(new Set(urls).size).toBe(2);
        // Opened only now: on SQLite, opening creates the file, and the pair must find none.
        db = openDb(config);

        for (const url of urls) {
          const res = await fetch(`${url}api/posts/`);
          const body = (await res.json()) as { count: number; results: unknown[] };
          expect({ status: res.status, count: body.count, results: body.results }).toEqual({ status: 200, count: 0, results: [] });
        }

        // One database behind both: a write through one is read through the other.
        const created = await fetch(`${urls[0]}api/posts/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ title: 'Shared', content: 'Written through the first instance', author: 'ada' }),
        });
        expect(created.status).toBe(201);
        const record = (await created.json()) as { id: number };
        const read = await fetch(`${urls[1]}api/posts/${record.id}/`);
        expect({ status: read.status, body: await read.json() }).toEqual({ status: 200, body: record });

        const names = (await db('knex_migrations').select('name').orderBy('id')).map((r: { name: string }) => r.name);
        const once = (await reference.db('knex_migrations').select('name').orderBy('id')).map((r: { name: string }) => r.name);
        expect(once.length).toBeGreaterThan(0);
        expect(names).toEqual(once);
        const locks = await db('knex_migrations_lock').select('is_locked');
        expect(locks.map((l: { is_locked: unknown }) => Number(l.is_locked))).toEqual([0]);

        // SIGKILL after 10 s: one that does not stop by itself ends with a signal, not code 0.
        const exits = await Promise.all(runs.map((run) => run.stop('SIGTERM', 10_000)));
        expect(exits.map((e, i) => ({ ...e, stderr: runs[i].stderr() }))).toEqual([
          { code: 0, signal: null, stderr: '' },
          { code: 0, signal: null, stderr: '' },
        ]);
      } finally {
        await reference.drop();
        await dropTestDatabase(config, db);
      }
    },
    2 * START_TIMEOUT_MS + 30_000,
  );
});
