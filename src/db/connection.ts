import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import knex, { Knex, KnexTimeoutError } from 'knex';
import type { Connection as MysqlConnection } from 'mysql2';
import type { DatabaseConfig, PoolConfig } from '../config';
import { makeFolder } from '../lib/makeFolder';
import { within } from '../lib/within';
import { registerSqliteFunctions } from './sqliteFunctions';
import { keepPrepared } from './prepared';
import { ThreadedSqliteClient } from './sqliteThread';

export type Db = Knex;

/** Where knex's own warnings go (the service's logger); messages never carry bound values. */
export interface DbLog {
  warn(message: string): void;
  error(message: string): void;
}

export const DEFAULT_POOL: PoolConfig = { size: 10, queryTimeoutMs: 5000 };
/** How long opening a connection may take: a server that does not answer is answered 503 this soon. */
export const CONNECT_TIMEOUT_MS = 2000;

/**
 * How long a request waits for a pooled connection before it is answered 503: the query timeout,
 * and never shorter than opening a connection takes.
 */
export function acquireTimeoutMs(pool: PoolConfig): number {
  return Math.max(CONNECT_TIMEOUT_MS, pool.queryTimeoutMs);
}

export interface OpenOptions {
  /**
   * SQLite: the connection only reads (query_only) and changes nothing in the file as it opens. Not
   * opened read-only, so that as the last to close a WAL database it removes the -wal and -shm files.
   */
  readOnly?: boolean;
  /**
   * SQLite, with readOnly: each statement runs on a worker thread of the connection's own
   * (sqliteThread/), so a long one does not hold the event loop.
   */
  thread?: boolean;
}

export function openDb(config: DatabaseConfig, pool: PoolConfig = DEFAULT_POOL, log?: DbLog, options: OpenOptions = {}): Db {
  const text = (m: unknown) => (typeof m === 'string' ? m : ((m as Error)?.message ?? String(m)));
  const common = {
    // Error messages keep the SQL's placeholders, never the values: those are request bodies.
    compileSqlOnError: false,
    // Without a logger, knex's own copies (printed with stacks) are muted: each error also
    // reaches the caller, which reports it.
    log: log
      ? { warn: (m: unknown) => log.warn(text(m)), error: (m: unknown) => log.error(text(m)), deprecate: () => {}, debug: () => {} }
      : { warn() {}, error() {}, deprecate() {}, debug() {} },
  };
  if (config.client === 'sqlite') {
    if (config.filename !== ':memory:' && !options.readOnly) makeFolder(dirname(config.filename));
    if (options.thread && options.readOnly) {
      // The thread opens the file query-only, with the search functions, as afterCreate does below.
      return knex({
        ...common,
        client: ThreadedSqliteClient as unknown as typeof Knex.Client,
        connection: { filename: config.filename },
        useNullAsDefault: true,
        pool: { min: 0, max: 1 },
        // Searches queued for the thread past their budget are answered 503, as on MySQL.
        acquireConnectionTimeout: acquireTimeoutMs(pool),
      });
    }
    const db = knex({
      ...common,
      client: 'better-sqlite3',
      connection: { filename: config.filename },
      useNullAsDefault: true,
      pool: {
        min: 1,
        max: 1,
        afterCreate(conn: BetterSqlite3.Database, done: (err: Error | null, conn: unknown) => void) {
          try {
            conn.pragma(options.readOnly ? 'query_only = ON' : 'journal_mode = WAL');
            conn.pragma('busy_timeout = 5000');
            conn.pragma('foreign_keys = ON');
            keepPrepared(conn);
            registerSqliteFunctions(conn);
            done(null, conn);
          } catch (err) {
            done(err as Error, conn);
          }
        },
      },
    });
    if (config.filename !== ':memory:' && !options.readOnly)
      keepReader(db, () => openDb(config, pool, log, { readOnly: true, thread: true }));
    return db;
  }
  const settings = {
    user: config.user,
    password: config.password,
    database: config.database,
    charset: 'utf8mb4',
    timezone: 'Z',
    // DATETIME and DATE come back as the strings they were stored as; serializers format them.
    dateStrings: true,
    supportBigNumbers: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
  };
  const hosts = config.hosts && config.hosts.length > 1 ? config.hosts : undefined;
  let next = 0;
  return knex({
    ...common,
    client: 'mysql2',
    // Several hosts (a cluster's nodes): knex asks this function for every connection it opens,
    // and each goes to the next node in turn. A node that refuses, or a Galera node not ready for
    // clients, fails that connection (503), and a retried step takes the next node.
    connection: hosts
      ? () => {
          const host = hosts[next];
          next = (next + 1) % hosts.length;
          return { ...settings, host: host.host, port: host.port };
        }
      : { ...settings, host: config.host, port: config.port },
    pool: {
      min: 0,
      max: pool.size,
      afterCreate(conn: MysqlConnection, done: (err: Error | null, conn: unknown) => void) {
        conn.query(
          "SET SESSION time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
          (err: Error | null) => {
            if (err) return done(err, conn);
            setUpGalera(conn, pool.wsrepSyncWait ?? DEFAULT_WSREP_SYNC_WAIT).then(
              () => done(null, conn),
              (e: Error) => done(e, conn),
            );
          },
        );
      },
    },
    acquireConnectionTimeout: acquireTimeoutMs(pool),
  });
}

/**
 * `db` with knex's `.timeout()` on every statement it and its transactions build (a Proxy, so no
 * call site can forget it); on MySQL a statement past it is killed. Not for the migrating pool,
 * which may wait longer. `ms` may be a function, read as each statement is made (withDeadline).
 */
export function withQueryTimeout(db: Db, ms: number | (() => number)): Db {
  // KILL QUERY names a thread of one server: with several hosts, knex would send it to whichever
  // node its new connection reaches. There the statement is answered 503 at the timeout and
  // left to end on its node.
  const cancel = isMysql(db) && typeof (db.client as Knex.Client).config.connection !== 'function';
  const wrapped = hookStatements(db, (built) => {
    const b = built as { timeout?: (ms: number, o: { cancel: boolean }) => unknown; client?: { statementsRunToEnd?: boolean } };
    // A SQLite thread's statements run to their end (sqliteThread/): the wait for its connection
    // is bounded instead (acquireConnectionTimeout).
    if (typeof b?.timeout !== 'function' || b.client?.statementsRunToEnd) return built;
    return b.timeout(typeof ms === 'function' ? ms() : ms, { cancel });
  });
  if (typeof ms === 'number') queryTimeouts.set(wrapped, ms);
  return wrapped;
}

/**
 * A pool of at most one connection of its own, with `db`'s settings (session setup, SQLite's
 * functions) and query timeout: for work that holds a connection for long, such as an export's
 * snapshot, without taking one of the service's. Destroy it when done.
 */
export function openSibling(db: Db): Db {
  const config = (db.client as Knex.Client).config;
  const sibling = knex({ ...config, pool: { ...config.pool, min: 0, max: 1 } });
  reportAs(sibling, db);
  const ms = queryTimeouts.get(db);
  return ms === undefined ? sibling : withQueryTimeout(sibling, ms);
}

/** `other`'s statements are reported as `db`'s, to whatever watches those (logs, tests). */
function reportAs(other: Db, db: Db): void {
  for (const event of ['query', 'query-error', 'query-response']) other.on(event, (...args: unknown[]) => db.emit(event, ...args));
}

/** SQLite: each file database's query-only pool (readerOf), opened on first use and closed with it. */
const readers = new WeakMap<object, Reader>();

interface Reader {
  open: () => Db;
  pool?: Db;
  /** The pool as each `db` given to readerOf sees it: with that db's hooks (query timeout, tests' hooks). */
  as: WeakMap<Db, Db>;
}

function keepReader(db: Db, open: () => Db): void {
  const entry: Reader = { open, as: new WeakMap() };
  readers.set(poolKey(db), entry);
  const client = db.client as Knex.Client;
  const destroy = client.destroy.bind(client);
  client.destroy = async (callback?: (err?: unknown) => void): Promise<void> => {
    const reader = entry.pool;
    entry.pool = undefined;
    entry.as = new WeakMap();
    await reader?.destroy();
    await destroy(callback);
  };
}

/**
 * SQLite: a pool of one query-only connection on a thread of its own beside `db`'s, with `db`'s
 * statement hooks (its query timeout bounding the wait for the thread), for reads that hold a
 * connection across statements (a search's snapshot): other requests neither queue behind them
 * nor wait while they run. `db` itself on MySQL, in memory, or in a transaction.
 */
export function readerOf(db: Db): Db {
  const entry = inTransaction(db) ? undefined : readers.get(poolKey(db));
  if (!entry) return db;
  const known = entry.as.get(db);
  if (known) return known;
  const hooks: ((built: unknown) => unknown)[] = [];
  let pool = db;
  for (let h = hooked.get(pool); h; h = hooked.get(pool)) {
    hooks.unshift(h.hook);
    pool = h.under;
  }
  if (!entry.pool) {
    entry.pool = entry.open();
    reportAs(entry.pool, pool);
  }
  const reader = hooks.reduce<Db>((r, hook) => hookStatements(r, hook), entry.pool);
  const ms = queryTimeouts.get(db);
  if (ms !== undefined) queryTimeouts.set(reader, ms);
  entry.as.set(db, reader);
  return reader;
}

/**
 * `db` whose every call that may start a statement, on it or its transactions, has its result
 * passed through `hook` as it is made; `hook` returns what it does not know unchanged.
 */
export function hookStatements(db: Db, hook: (built: unknown) => unknown): Db {
  const wrap = (target: Knex | Knex.Transaction): Db =>
    new Proxy(target, {
      apply: (fn, self, args: unknown[]) => hook(Reflect.apply(fn, self, args)),
      get(fn, prop, receiver) {
        const value: unknown = Reflect.get(fn, prop, receiver);
        if (prop === 'transaction') {
          return (scope?: (trx: Knex.Transaction) => Promise<unknown>, config?: Knex.TransactionConfig) =>
            typeof scope === 'function'
              ? fn.transaction((trx) => scope(wrap(trx) as Knex.Transaction), config)
              : fn.transaction(config).then((trx) => wrap(trx) as Knex.Transaction);
        }
        if (typeof value === 'function') return (...args: unknown[]) => hook((value as (...a: unknown[]) => unknown).apply(fn, args));
        return value;
      },
    }) as Db;
  const wrapped = wrap(db);
  hooked.set(wrapped, { under: db, hook });
  return wrapped;
}

/** What hookStatements wrapped, and with which hook (readerOf gives its pool the same). */
const hooked = new WeakMap<Db, { under: Db; hook: (built: unknown) => unknown }>();

const queryTimeouts = new WeakMap<Db, number>();

/**
 * `db` for several statements that must end within one query timeout together (a search): each
 * gets what is left of the budget when it is made, 1 ms once spent, so it times out as any slow
 * statement. `until` is the deadline (ms since the epoch), for waits that are not statements.
 */
export function withDeadline(db: Db): { db: Db; until?: number } {
  const ms = queryTimeouts.get(db);
  if (ms === undefined) return { db };
  const until = Date.now() + ms;
  return { db: withQueryTimeout(db, () => Math.max(1, until - Date.now())), until };
}

/**
 * Answers when the database runs a trivial statement within `ms` (readiness), the wait for a pooled
 * connection included, which a statement's own timeout would not bound. Past `ms` it rejects.
 */
export async function ping(db: Db, ms: number): Promise<void> {
  // One abandoned check at a time: probes every second through a long outage would otherwise
  // queue for the pool one behind the other (its wait follows DB_QUERY_TIMEOUT_MS), ahead of requests.
  if (abandonedPings.has(db)) throw new KnexTimeoutError('the last readiness check still waits for the database');
  const answered = Promise.resolve(db.raw('SELECT 1').timeout(ms, { cancel: false }));
  answered.then(
    () => abandonedPings.delete(db),
    () => abandonedPings.delete(db),
  );
  await within(answered, ms, () => {
    abandonedPings.add(db);
    return new KnexTimeoutError(`no answer to SELECT 1 within ${ms} ms`);
  });
}

/** Pools with a readiness check abandoned at its deadline and still waiting (ping). */
const abandonedPings = new WeakSet<Db>();

export interface PoolStats {
  /** Connections lent to a running request. */
  inUse: number;
  /** Open connections waiting to be lent. */
  idle: number;
  /** Requests waiting for a connection. */
  waiting: number;
  max: number;
}

/**
 * The pool's state, for metrics, from the tarn pool knex keeps at `client.pool` (knex has no API
 * for it); knex is pinned, and tests/integration/db/connection.test.ts fails on an upgrade that moves it.
 */
export function poolStats(db: Db): PoolStats {
  const pool = (db.client as { pool?: TarnPool }).pool;
  if (!pool) return { inUse: 0, idle: 0, waiting: 0, max: 0 };
  return { inUse: pool.numUsed(), idle: pool.numFree(), waiting: pool.numPendingAcquires(), max: pool.max };
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

/** What a pool and its transactions share (their connection settings): the key of values kept per pool. */
export function poolKey(db: Db | Knex.Transaction): object {
  return (db.client as Knex.Client).config as object;
}

/** The value `store` keeps for this pool, made by `make` on first use. */
export function perPool<T>(store: WeakMap<object, T>, db: Db | Knex.Transaction, make: () => T): T {
  const key = poolKey(db);
  let value = store.get(key);
  if (value === undefined) store.set(key, (value = make()));
  return value;
}

export function isMysql(db: Db | Knex.Transaction | Knex.QueryBuilder): boolean {
  return (db.client as Knex.Client).config.client === 'mysql2';
}

/** Whether `db` is a transaction already (work on it joins it rather than starting one). */
export function inTransaction(db: Db | Knex.Transaction): db is Knex.Transaction {
  return 'isTransaction' in db && db.isTransaction === true;
}

/** Creates the MySQL database named in the config if it is missing (used by tests and first start). */
export async function ensureMysqlDatabase(config: DatabaseConfig): Promise<void> {
  if (config.client !== 'mysql') return;
  // Quiet: a failure here is thrown to the caller, which reports it once.
  const admin = openDb({ ...config, database: '' }, DEFAULT_POOL, { warn() {}, error() {} });
  try {
    await admin.raw('CREATE DATABASE IF NOT EXISTS ?? CHARACTER SET utf8mb4 COLLATE utf8mb4_bin', [config.database]);
  } finally {
    await admin.destroy();
  }
}

/**
 * On a Galera node, every read first waits until the node has applied what the cluster committed
 * before it (wsrep_sync_wait), so a read sees the write before it on any node.
 */
export const DEFAULT_WSREP_SYNC_WAIT = 1;

/** Whether the server replicates with Galera: the rows of WSREP_ON say. */
export const WSREP_ON = "SHOW VARIABLES LIKE 'wsrep_on'";
export function wsrepOn(rows: readonly Record<string, unknown>[]): boolean {
  return rows.some((r) => r.Value === 'ON');
}

async function setUpGalera(conn: RawConnection, syncWait: number): Promise<void> {
  if (!wsrepOn(await rawQuery(conn, WSREP_ON))) return;
  // A node that is not synced with a primary component refuses clients' statements.
  const [ready] = await rawQuery(conn, "SHOW GLOBAL STATUS LIKE 'wsrep_ready'");
  if (ready && ready.Value !== 'ON')
    throw Object.assign(new Error('the Galera node is not ready (wsrep_ready=OFF)'), { code: 'ER_UNKNOWN_COM_ERROR' });
  await rawQuery(conn, 'SET SESSION wsrep_sync_wait = ?', [syncWait]);
}

interface RawConnection {
  query(sql: string, values: unknown[], cb: (err: Error | null, rows: Record<string, unknown>[]) => void): void;
}

function rawQuery(conn: RawConnection, sql: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => conn.query(sql, values, (err, rows) => (err ? reject(err) : resolve(rows))));
}
