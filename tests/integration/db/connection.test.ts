import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { CONNECT_TIMEOUT_MS, openDb, poolStats, readerOf, withDeadline, withQueryTimeout } from '../../../src/db/connection';
import { classifyDbError } from '../../../src/db/errors';
import { ThreadConnection } from '../../../src/db/sqliteThread';
import { dialect, freshConfig, useTestDatabase } from '../../helpers/db';

// poolStats reads knex's tarn pool at `client.pool` (knex has no API for it; knex and tarn are
// pinned): this fails on the upgrade that moves or renames it, instead of metrics reading zeros.
describe('pool figures', () => {
  const t = useTestDatabase({ size: 3, queryTimeoutMs: 5000 });

  test('count a connection while it is lent, and the pool size', async () => {
    const max = dialect === 'mysql' ? 3 : 1;
    expect(poolStats(t.db)).toMatchObject({ inUse: 0, waiting: 0, max });
    await t.db.transaction(async (trx) => {
      await trx.raw('SELECT 1');
      expect(poolStats(t.db)).toMatchObject({ inUse: 1, max });
    });
    expect(poolStats(t.db)).toMatchObject({ inUse: 0, idle: expect.any(Number) });
  });
});

describe('withQueryTimeout', () => {
  const t = useTestDatabase();

  /** The timeout a statement was given, read from what knex compiles to run it. */
  const timeoutOf = (built: { toSQL(): object }) => (built.toSQL() as { timeout?: number }).timeout;

  test('gives builders, raw statements and transactions the timeout, unless a statement sets its own', async () => {
    const db = withQueryTimeout(t.db, 1234);
    expect(timeoutOf(db('posts').select('id'))).toBe(1234);
    expect(timeoutOf(db.raw('SELECT 1'))).toBe(1234);
    expect(timeoutOf(db.raw('SELECT 1').timeout(99))).toBe(99);
    await db.transaction(async (trx) => {
      expect(timeoutOf(trx('posts').where({ id: 1 }))).toBe(1234);
      expect(await trx('posts').count({ n: '*' })).toEqual([{ n: 0 }]);
    });
    expect(timeoutOf(t.db('posts').select('id'))).toBeFalsy();
  });

  test('withDeadline gives the statements of one piece of work what is left of one timeout', async () => {
    const { db } = withDeadline(withQueryTimeout(t.db, 1000));
    const first = timeoutOf(db('posts').select('id'))!;
    expect(first).toBeGreaterThan(800);
    expect(first).toBeLessThanOrEqual(1000);
    expect(await db('posts').count({ n: '*' })).toEqual([{ n: 0 }]);
    await new Promise((r) => setTimeout(r, 400));
    expect(timeoutOf(db.raw('SELECT 1'))).toBeLessThanOrEqual(first - 390);
    await db.transaction((trx) => {
      expect(timeoutOf(trx('posts').where({ id: 1 }))).toBeLessThanOrEqual(first - 390);
      return Promise.resolve();
    });
    await new Promise((r) => setTimeout(r, 700));
    // Spent: a statement still gets a timeout (1 ms), never none, and fails as any late one does.
    expect(timeoutOf(db('posts').select('id'))).toBe(1);
    // Each call starts a budget of its own; a db without a timeout has none to share.
    expect(timeoutOf(withDeadline(withQueryTimeout(t.db, 1000)).db('posts'))).toBeGreaterThan(800);
    expect(withDeadline(t.db)).toEqual({ db: t.db });
  });

  test('leaves the pool it wraps usable and destroyable', async () => {
    const own = withQueryTimeout(openDb(t.config), 1000);
    expect(await own('posts').count({ n: '*' })).toEqual([{ n: 0 }]);
    await own.destroy();
  });
});

describe('readerOf', () => {
  const t = useTestDatabase({ size: 1, queryTimeoutMs: 5000 });
  const count = async (db: typeof t.db) => {
    const [{ n }] = await db('posts').count<{ n: number }[]>({ n: '*' });
    return Number(n);
  };

  test('MySQL: the pool itself', () => {
    if (dialect !== 'mysql') return;
    expect(readerOf(t.db)).toBe(t.db);
  });

  // SQLite has one connection per pool: a search's snapshot held on it would make every other
  // request of the process wait for it to end.
  (dialect === 'sqlite' ? test : test.skip)(
    'SQLite: reads beside the pool’s one connection, committed rows only, never writes',
    async () => {
      const db = withQueryTimeout(t.db, 1234);
      const reader = readerOf(db);
      expect(reader).not.toBe(db);
      expect(readerOf(db)).toBe(reader);
      // Its statements run to their end: nothing could stop them (see below).
      expect((reader('posts') as unknown as { toSQL(): { timeout?: number } }).toSQL().timeout).toBeFalsy();
      const row = { title: 't', content: 'c', author: 'a', created_at: '2026-01-01 00:00:00.000', updated_at: '2026-01-01 00:00:00.000' };
      await db.transaction(async (trx) => {
        expect(readerOf(trx)).toBe(trx);
        await trx('posts').insert(row);
        // The pool's connection is held by this transaction: the reader answers anyway, from the last commit.
        expect(await count(reader)).toBe(0);
      });
      expect(await count(reader)).toBe(1);
      await expect(reader('posts').delete()).rejects.toThrow(/readonly|query_only|read-only/i);
      expect(await count(db)).toBe(1);
    },
  );

  // Buffers cross between threads as plain Uint8Arrays, which better-sqlite3 neither binds as a
  // BLOB nor do callers read as a Buffer (search's keys and sets are BLOBs).
  (dialect === 'sqlite' ? test : test.skip)('SQLite: the reader binds and answers BLOBs as Buffers, as the pool does', async () => {
    const reader = readerOf(t.db);
    const blob = Buffer.from('clé\u0000', 'utf8');
    const rows = await reader.raw<{ b: unknown; same: number }[]>("SELECT ? AS b, ? = X'636CC3A900' AS same", [blob, blob]);
    expect(Buffer.isBuffer(rows[0].b)).toBe(true);
    expect((rows[0].b as Buffer).equals(blob)).toBe(true);
    expect(rows[0].same).toBe(1);
  });

  /** A statement that keeps SQLite busy for a while (hundreds of ms) and returns one row. */
  const SLOW = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) SELECT count(*) AS c FROM n';

  // better-sqlite3 runs a statement on the thread that calls it: the reader's run on a thread of
  // their own, or a search's would hold every other request of its process.
  (dialect === 'sqlite' ? test : test.skip)('SQLite: its statements leave the event loop free while they run', async () => {
    const reader = readerOf(t.db);
    await reader.raw('SELECT 1'); // the thread started
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    try {
      const started = Date.now();
      expect(await reader.raw(SLOW)).toEqual([{ c: 3000000 }]);
      expect(Date.now() - started).toBeGreaterThan(50);
      expect(ticks).toBeGreaterThan(3);
    } finally {
      clearInterval(timer);
    }
  });

  // A timeout could not stop the statement, only waste it: the request would get its 503 while the
  // thread ran on. The wait for the thread is what the query timeout bounds.
  (dialect === 'sqlite' ? test : test.skip)(
    'SQLite: a statement runs to its end; a wait for the thread past the query timeout fails as unavailable',
    async () => {
      expect(await readerOf(withQueryTimeout(t.db, 20)).raw(SLOW)).toEqual([{ c: 3000000 }]);
      const own = withQueryTimeout(openDb(t.config, { size: 1, queryTimeoutMs: 100 }), 100);
      try {
        const reader = readerOf(own);
        const held: unknown = await reader.client.acquireConnection();
        const started = Date.now();
        const failure = await reader.raw('SELECT 1').then(
          () => 'answered',
          (err: unknown) => classifyDbError(err, 'posts', []),
        );
        expect(failure).toEqual({ kind: 'unavailable', timeout: true });
        // acquireTimeoutMs: the query timeout, never under the time a connection takes to open.
        expect(Date.now() - started).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS - 50);
        await reader.client.releaseConnection(held);
        expect(await reader.raw('SELECT 2 AS two')).toEqual([{ two: 2 }]);
      } finally {
        await own.destroy();
      }
    },
  );

  (dialect === 'sqlite' ? test : test.skip)('SQLite: errors keep their codes', async () => {
    await expect(readerOf(t.db).raw('SELECT * FROM no_such_table')).rejects.toMatchObject({
      code: 'SQLITE_ERROR',
      message: expect.stringMatching(/no such table/) as unknown,
    });
  });

  (dialect === 'sqlite' ? test : test.skip)('SQLite: a thread that stops fails its statement as unavailable, and is replaced', async () => {
    const conn = await ThreadConnection.open((t.config as { filename: string }).filename);
    const running = conn.run(SLOW, []);
    await (conn as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    const failure = await running.then(
      () => 'answered',
      (err: unknown) => classifyDbError(err, 'posts', []),
    );
    expect(failure).toEqual({ kind: 'unavailable', timeout: false });
    expect(conn.alive).toBe(false);
    await conn.close();

    // The pool checks a connection as it lends it: a stopped thread's is replaced.
    const reader = readerOf(t.db);
    const pooled = (await reader.client.acquireConnection()) as ThreadConnection;
    await reader.client.releaseConnection(pooled);
    await (pooled as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    expect(await reader.raw('SELECT 3 AS three')).toEqual([{ three: 3 }]);
  });

  test('closes with its pool', async () => {
    const own = openDb(t.config);
    const reader = readerOf(own);
    expect(await reader.raw('SELECT 1')).toBeTruthy();
    await own.destroy();
    // A destroyed knex answers no statement, whichever pool it was.
    await expect(reader.raw('SELECT 1')).rejects.toThrow();
  });
});

// A SQLite file whose folder goes away under a running service (a volume unmounted, a cleanup
// run): the next connection cannot open it, which must be a 503 (unavailable), never a 500.
(dialect === 'sqlite' ? describe : describe.skip)('a SQLite folder that is gone', () => {
  test('the connection that cannot open the file fails as unavailable', async () => {
    const config = freshConfig();
    const db = openDb(config);
    try {
      rmSync(dirname((config as { filename: string }).filename), { recursive: true, force: true });
      const failure = await db.raw('SELECT 1').then(
        () => 'answered',
        (err: unknown) => classifyDbError(err, 'posts', []),
      );
      expect(failure).toEqual({ kind: 'unavailable', timeout: false });
    } finally {
      await db.destroy();
    }
  });
});
