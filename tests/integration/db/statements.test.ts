import { openDb, type Db } from '../../../src/db/connection';
import { compiledCount, compiledRows, PARAM } from '../../../src/db/statements';

// Statements compiled once and run with new values (db/statements.ts), on an SQLite of its own.
describe('compiledRows', () => {
  let db: Db;
  beforeAll(async () => {
    db = openDb({ client: 'sqlite', filename: ':memory:' });
    await db.schema.createTable('things', (t) => {
      t.increments('id');
      t.string('name');
    });
    await db('things').insert([{ name: 'a' }, { name: 'b' }, { name: 'c' }]);
  });
  afterAll(() => db.destroy());

  const byId = (id: number) => compiledRows<{ name: string }>(db, 'things by id', (q) => q('things').where({ id: PARAM }).first(), [id]);

  test('one text, each call its own values', async () => {
    expect((await byId(1))[0].name).toBe('a');
    expect((await byId(3))[0].name).toBe('c');
    expect(await byId(4)).toEqual([]);
  });

  test('values in the order of the placeholders; a wrong count is refused', async () => {
    const between = (lo: number, hi: number) =>
      compiledRows<{ name: string }>(db, 'things between', (q) => q('things').whereBetween('id', [PARAM, PARAM]).orderBy('id'), [lo, hi]);
    expect((await between(2, 3)).map((r) => r.name)).toEqual(['b', 'c']);
    await expect(compiledRows(db, 'things by id', (q) => q('things'), [1, 2])).rejects.toThrow('binds 1 values, not 2');
  });

  test('keys that requests choose cannot grow the cache without bound', async () => {
    for (let n = 1; n <= 1100; n++) {
      const rows = await compiledRows<{ id: number }>(db, `things limit ${n}`, (q) => q('things').select('id').limit(n));
      expect(rows).toHaveLength(Math.min(n, 3));
    }
    expect(compiledCount()).toBe(1000);
  });
});
