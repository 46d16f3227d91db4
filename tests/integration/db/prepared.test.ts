import Database from 'better-sqlite3';
import { keepPrepared } from '../../../src/db/prepared';
import { openDb } from '../../../src/db/connection';

// SQLite connections hand back a statement prepared before for the same text (prepared.ts): the
// statements must answer as fresh ones would, and the kept ones stay few.

function connection(size?: number): { conn: Database.Database; prepared: string[] } {
  const conn = new Database(':memory:');
  const prepared: string[] = [];
  const prepare = conn.prepare.bind(conn);
  conn.prepare = (sql: string) => {
    prepared.push(sql);
    return prepare(sql);
  };
  keepPrepared(conn, size);
  conn.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  return { conn, prepared };
}

describe('keepPrepared', () => {
  test('the same text is prepared once, and each run binds its own values', () => {
    const { conn, prepared } = connection();
    const insert = 'INSERT INTO t (v) VALUES (?)';
    for (const v of ['a', 'b', 'c']) conn.prepare(insert).run(v);
    const select = 'SELECT v FROM t WHERE id >= ? ORDER BY id';
    expect(conn.prepare(select).all(2)).toEqual([{ v: 'b' }, { v: 'c' }]);
    expect(conn.prepare(select).all(3)).toEqual([{ v: 'c' }]);
    expect(prepared.filter((s) => s === insert)).toHaveLength(1);
    expect(prepared.filter((s) => s === select)).toHaveLength(1);
  });

  test('past its size, the least recently used statement is prepared again', () => {
    const { conn, prepared } = connection(2);
    const texts = ['SELECT 1 AS x', 'SELECT 2 AS x', 'SELECT 3 AS x'];
    conn.prepare(texts[0]).get();
    conn.prepare(texts[1]).get();
    conn.prepare(texts[0]).get(); // the first is now the most recent
    conn.prepare(texts[2]).get(); // the second goes
    conn.prepare(texts[0]).get();
    conn.prepare(texts[1]).get();
    expect(prepared.filter((s) => s.startsWith('SELECT'))).toEqual([texts[0], texts[1], texts[2], texts[1]]);
  });

  test('a statement that failed runs again, and one read after a change of schema sees it', () => {
    const { conn } = connection();
    const insert = 'INSERT INTO t (id, v) VALUES (?, ?)';
    conn.prepare(insert).run(1, 'a');
    expect(() => conn.prepare(insert).run(1, 'b')).toThrow(/UNIQUE/);
    conn.prepare(insert).run(2, 'b');
    const all = 'SELECT * FROM t ORDER BY id';
    expect(conn.prepare(all).all()).toEqual([
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
    ]);
    conn.exec("ALTER TABLE t ADD COLUMN w TEXT DEFAULT 'z'");
    expect(conn.prepare(all).all()).toEqual([
      { id: 1, v: 'a', w: 'z' },
      { id: 2, v: 'b', w: 'z' },
    ]);
  });

  test("the service's SQLite connections keep knex's statements", async () => {
    const db = openDb({ client: 'sqlite', filename: ':memory:' });
    try {
      await db.raw('CREATE TABLE t (id INTEGER PRIMARY KEY)');
      await db('t').insert([{ id: 1 }, { id: 2 }]);
      const conn = (await db.client.acquireConnection()) as Database.Database;
      const statement = conn.prepare('select `id` from `t` where `id` = ?');
      await db.client.releaseConnection(conn);
      expect(await db('t').where('id', 2).pluck('id')).toEqual([2]);
      expect(await db('t').where('id', 1).pluck('id')).toEqual([1]);
      const again = (await db.client.acquireConnection()) as Database.Database;
      expect(again.prepare('select `id` from `t` where `id` = ?')).toBe(statement);
      await db.client.releaseConnection(again);
    } finally {
      await db.destroy();
    }
  });
});
