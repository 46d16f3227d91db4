import { createConnection, type Connection } from 'mysql2/promise';
import { startTestApp, type TestApp } from '../../helpers/app';
import { dialect } from '../../helpers/db';
import { dbTimestamp } from '../../../src/db/time';

// A statement that runs past DB_QUERY_TIMEOUT_MS is cancelled on the server (KILL QUERY) and
// answered 503, and its connection goes back to the pool. MySQL only: better-sqlite3 runs
// statements synchronously, so there is nothing to cancel.
const QUERY_TIMEOUT_MS = 500;
const mysqlOnly = dialect === 'mysql' ? describe : describe.skip;

mysqlOnly('query timeout', () => {
  let app: TestApp;
  let locker: Connection;
  beforeAll(async () => {
    app = await startTestApp({ pool: { size: 1, queryTimeoutMs: QUERY_TIMEOUT_MS } });
    const c = app.database.config as Extract<typeof app.database.config, { client: 'mysql' }>;
    locker = await createConnection({ host: c.host, port: c.port, user: c.user, password: c.password, database: c.database });
    // The first request compiles the operation's validators; later ones reach the database at once.
    expect((await app.request('GET', '/api/posts/?search=warm')).status).toBe(200);
  });
  afterAll(async () => {
    await locker.end();
    await app.close();
  });

  /**
   * The app's statements still running on the server, seen from another connection (leaving out
   * the KILL QUERY of the cancellation itself, whose connection may still be closing).
   */
  async function running(): Promise<string[]> {
    const [rows] = await locker.query(
      "SELECT info FROM information_schema.processlist WHERE db = DATABASE() AND id <> CONNECTION_ID() AND command = 'Query' AND info IS NOT NULL AND info NOT LIKE 'KILL %'",
    );
    return (rows as { info: string }[]).map((r) => r.info);
  }

  async function pool(): Promise<{ inUse: number; waiting: number }> {
    const text = (await app.request('GET', '/metrics')).body as string;
    const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    return { inUse: metric('db_pool_connections_in_use'), waiting: metric('db_pool_acquires_waiting') };
  }

  /** The pool as soon as it shows `want`, or as it is after a second. */
  async function poolBecomes(want: { inUse: number; waiting: number }) {
    const deadline = Date.now() + 1000;
    let seen = await pool();
    while ((seen.inUse !== want.inUse || seen.waiting !== want.waiting) && Date.now() < deadline) seen = await pool();
    return seen;
  }

  test('a statement blocked past the timeout is killed and answered 503; the pool is free again', async () => {
    const marker = 'qzkvtxw';
    // A post the search finds: a search that matches nothing reads only the index's tables,
    // and it is the page's rows, in the locked posts table, that block it.
    const now = dbTimestamp();
    await app.database.db('posts').insert({ title: `the ${marker} post`, content: 'body', author: 'a', created_at: now, updated_at: now });
    await locker.query('LOCK TABLES posts WRITE');
    try {
      // Two at once on a pool of one: the first holds the connection, the second waits for it.
      const first = app.request('GET', `/api/posts/?search=${marker}`);
      expect(await poolBecomes({ inUse: 1, waiting: 0 })).toEqual({ inUse: 1, waiting: 0 });
      // A filter, which reads the posts table.
      const second = app.request('GET', '/api/posts/?author=nobody');
      expect(await poolBecomes({ inUse: 1, waiting: 1 })).toEqual({ inUse: 1, waiting: 1 });

      for (const res of [await first, await second]) {
        expect(res.status).toBe(503);
        expect(res.body).toMatchObject({ type: '/problems/database-timeout', detail: 'The database did not answer in time' });
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      // Killed on the server, not left waiting on the lock with a connection held.
      expect(await running()).toEqual([]);
      expect(await pool()).toEqual({ inUse: 0, waiting: 0 });
    } finally {
      await locker.query('UNLOCK TABLES');
    }
    expect((await app.request('GET', '/api/posts/')).status).toBe(200);
    // The warning names the failure; the statement's values (the search) stay out of the log.
    expect(app.logs).toEqual(expect.arrayContaining([expect.objectContaining({ level: 'warn', msg: 'database unavailable' })]));
    expect(JSON.stringify(app.logs)).not.toContain(marker);
  });

  // These two run SQL that knex compiled once, through knex.raw (db/statements.ts).
  test.each(['/api/posts/1/', '/api/posts/?cursor='])('%s, blocked past the timeout, is killed and answered 503', async (path) => {
    await locker.query('LOCK TABLES posts WRITE');
    let res;
    try {
      res = await app.request('GET', path);
      expect(await running()).toEqual([]);
    } finally {
      await locker.query('UNLOCK TABLES');
    }
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ detail: 'The database did not answer in time' });
  });

  test('a write blocked past the timeout is 503 and changes nothing', async () => {
    const created = (await app.request('POST', '/api/posts/', { body: { title: 'before', content: 'c', author: 'a' } })).body;
    await locker.query('LOCK TABLES posts WRITE');
    let res;
    try {
      res = await app.request('PATCH', `/api/posts/${created.id}/`, { body: { title: 'after' } });
    } finally {
      await locker.query('UNLOCK TABLES');
    }
    expect(res.status).toBe(503);
    expect((await app.request('GET', `/api/posts/${created.id}/`)).body.title).toBe('before');
  });
});
