import { migrate } from '../../../src/schema';
import { collections } from '../../../src/collections';
import { ensureMysqlDatabase, openDb, type Db } from '../../../src/db/connection';
import { withMigrationLease } from '../../../src/db/lease';
import { dialect, dropTestDatabase, freshConfig } from '../../helpers/db';

// Migrations run when instances start, possibly several at once and on different nodes of a
// Galera cluster, where GET_LOCK is refused: they take turns through a lease row instead.

const config = freshConfig();
let dbs: Db[] = [];
beforeAll(async () => {
  await ensureMysqlDatabase(config);
  // One pool per "instance", as separate processes would have.
  dbs = Array.from({ length: 5 }, () => openDb(config));
});
afterAll(async () => {
  await Promise.all(dbs.slice(1).map((db) => db.destroy()));
  await dropTestDatabase(config, dbs[0]);
});

async function tables(db: Db): Promise<string[]> {
  if (dialect === 'mysql') {
    const [rows] = await db.raw(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'",
    );
    return (rows as { name: string }[]).map((r) => r.name).sort();
  }
  // Base tables only, as on MySQL: an FTS5 index is a virtual table (its own shadow tables are listed).
  const rows = await db.raw(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'",
  );
  return (rows as { name: string }[]).map((r) => r.name).sort();
}

async function primaryKey(db: Db, table: string): Promise<string[]> {
  if (dialect === 'mysql') {
    const [rows] = await db.raw(
      "SELECT column_name AS name FROM information_schema.key_column_usage WHERE table_schema = DATABASE() AND table_name = ? AND constraint_name = 'PRIMARY' ORDER BY ordinal_position",
      [table],
    );
    return (rows as { name: string }[]).map((r) => r.name);
  }
  const rows = await db.raw(`PRAGMA table_info(${JSON.stringify(table)})`);
  return (rows as { name: string; pk: number }[])
    .filter((r) => r.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((r) => r.name);
}

test('five instances migrating at once each succeed, and the migrations run once', async () => {
  await Promise.all(dbs.map((db) => migrate(db)));
  const names = await dbs[0]('knex_migrations').pluck('name');
  expect(names.length).toBeGreaterThan(0);
  expect(new Set(names).size).toBe(names.length);
  // Migrating an up-to-date database is a no-op.
  await migrate(dbs[1]);
  expect(await dbs[0]('knex_migrations').count({ n: '*' })).toEqual([{ n: names.length }]);
});

// A collection declared without a migration that makes its table fails here by name, before any
// test of its records does (docs/adding-a-collection.md: createRecordTable).
test('every declared collection has its table and search index after migrating', async () => {
  await migrate(dbs[0]);
  const made = await tables(dbs[0]);
  const missing = collections.map((c) => c.name).filter((name) => !made.includes(name));
  const unindexed = collections.map((c) => c.name).filter((name) => !made.some((t) => t.startsWith(`${name}_search_`)));
  expect({ withoutTable: missing, withoutSearchIndex: unindexed }).toEqual({ withoutTable: [], withoutSearchIndex: [] });
});

// Knex makes its lock row by reading the table and inserting one when it finds none, which two
// processes making the table at once on a new SQLite file can both do; it then takes its lock only
// when exactly one row changes.
test('a lock table left with two rows, one of them locked, is mended and the start migrates', async () => {
  const db = dbs[2];
  await migrate(db);
  await db('knex_migrations_lock').insert({ is_locked: 1 });
  expect(await db('knex_migrations_lock').count({ n: '*' })).toEqual([{ n: 2 }]);
  // Its lock is taken even with nothing to run, so an up-to-date database shows the defect.
  await migrate(db);
  const rows = await db('knex_migrations_lock').select('index', 'is_locked');
  expect(rows.map((r: { is_locked: unknown }) => Number(r.is_locked))).toEqual([0]);
  await migrate(dbs[3]);
});

// Galera replicates rows by primary key; a table without one cannot be written safely there.
test('every table has a primary key', async () => {
  const all = await tables(dbs[0]);
  expect(all).toEqual(expect.arrayContaining(['knex_migrations', 'knex_migrations_lock', 'posts', 'record_counts', 'idempotency_keys']));
  const without = [];
  for (const table of all) if (!(await primaryKey(dbs[0], table)).length) without.push(table);
  expect(without).toEqual([]);
});

const mysqlOnly = dialect === 'mysql' ? describe : describe.skip;

mysqlOnly('a write conflict (how Galera reports a node that had not applied the last holder yet)', () => {
  test('the migration step is run again, and the start goes on', async () => {
    let tries = 0;
    // The instance's pool, but its migrator's first run is refused as Galera refuses it.
    const conflicted = new Proxy(dbs[0], {
      get(target, prop, receiver) {
        if (prop !== 'migrate') return Reflect.get(target, prop, receiver) as unknown;
        return {
          latest: (c: unknown) => {
            if (tries++ === 0)
              return Promise.reject(Object.assign(new Error('Deadlock found when trying to get lock'), { code: 'ER_LOCK_DEADLOCK' }));
            return target.migrate.latest(c as Parameters<typeof target.migrate.latest>[0]);
          },
        };
      },
    });
    await migrate(conflicted);
    expect(tries).toBe(2);
  });
});

mysqlOnly('the migration lease', () => {
  test('holders never overlap', async () => {
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      dbs.map((db, i) =>
        withMigrationLease(
          db,
          async () => {
            inside++;
            most = Math.max(most, inside);
            await new Promise((r) => setTimeout(r, 50));
            order.push(i);
            inside--;
          },
          { name: 'test-overlap' },
        ),
      ),
    );
    expect(most).toBe(1);
    expect(order.sort()).toEqual([0, 1, 2, 3, 4]);
  });

  test('a lease left by a holder that died is taken over once it expires', async () => {
    await dbs[0]('migration_lease').insert({ name: 'test-dead', holder: 'dead', expires_at: dbs[0].raw('NOW(3) - INTERVAL 1 SECOND') });
    await expect(withMigrationLease(dbs[1], () => Promise.resolve('ran'), { name: 'test-dead' })).resolves.toBe('ran');
    expect(await dbs[0]('migration_lease').where({ name: 'test-dead' })).toEqual([]);
  });

  test('a live lease makes the next holder wait, then give up with a clear error', async () => {
    await dbs[0]('migration_lease').insert({ name: 'test-live', holder: 'alive', expires_at: dbs[0].raw('NOW(3) + INTERVAL 60 SECOND') });
    await expect(withMigrationLease(dbs[1], () => Promise.resolve('ran'), { name: 'test-live', waitSeconds: 1 })).rejects.toThrow(
      /waiting for another instance's migrations/,
    );
  });

  test('the holder renews its lease while it works', async () => {
    const expiry = () => dbs[0]('migration_lease').where({ name: 'test-renew' }).first('expires_at');
    await withMigrationLease(
      dbs[1],
      async () => {
        const first = (await expiry()).expires_at;
        await new Promise((r) => setTimeout(r, 700));
        expect((await expiry()).expires_at > first).toBe(true);
      },
      { name: 'test-renew', renewMs: 200 },
    );
  });
});

// A collection declared after the first five gets its table and its search index from a migration
// of its own (createRecordTable); the migrations before it must not reach for it on a fresh
// database, where its table does not exist yet.
test('a collection declared later leaves the earlier migrations to the first five', async () => {
  const later = freshConfig();
  await ensureMysqlDatabase(later);
  await jest.isolateModulesAsync(async () => {
    jest.doMock('../../../src/collections', () => {
      const actual = jest.requireActual<typeof import('../../../src/collections')>('../../../src/collections');
      return { ...actual, collections: [...actual.collections, { ...actual.collections[0], name: 'later' }] };
    });
    const isolated = await import('../../../src/schema');
    const db = openDb(later);
    try {
      await isolated.migrate(db);
      const made = await tables(db);
      expect(made).not.toContain('later');
      // ...while each of the first five still gets its search index (SQLite's FTS5 shadow tables,
      // MySQL's word tables): `<name>_search_...`.
      const indexed = ['posts', 'products', 'books', 'users', 'tasks'].filter((name) => made.some((t) => t.startsWith(`${name}_search_`)));
      expect(indexed).toEqual(['posts', 'products', 'books', 'users', 'tasks']);
    } finally {
      await dropTestDatabase(later, db);
    }
  });
});
