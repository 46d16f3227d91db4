import { COUNT_SLOTS, countAll, recount } from '../../../src/db/counts';
import { startTestApp, type TestApp } from '../../helpers/app';
import { fixtures } from '../../helpers/fixtures';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

async function rows(table: string): Promise<number> {
  const [{ n }] = await app.database.db(table).count({ n: '*' });
  return Number(n);
}

// The unfiltered list's count is read from counters that the database's triggers keep; it must
// equal COUNT(*) through concurrent creates and deletes, which is what a client sees as `count`.
describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  test('count stays exact through concurrent creates and deletes', async () => {
    const created = await Promise.all(
      Array.from({ length: 30 }, (_, i) => app.request('POST', `/api/${name}/`, { body: f.valid(1000 + i) })),
    );
    expect(created.map((r) => r.status)).toEqual(Array(30).fill(201));
    await Promise.all(created.slice(0, 12).map((r) => app.request('DELETE', `/api/${name}/${r.body.id}/`)));
    // Deleting what is already gone changes nothing.
    await app.request('DELETE', `/api/${name}/${created[0].body.id}/`);

    const list = await app.request('GET', `/api/${name}/`);
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(await rows(name));
    expect(list.body.count).toBe(18);
    expect(await countAll(app.database.db, name)).toBe(18);
  });

  test('recount sets the counter from the rows after a load that bypassed it', async () => {
    const before = await rows(name);
    await app.database.db('record_counts').where({ table_name: name }).update({ n: 999 });
    expect(await countAll(app.database.db, name)).toBe(999 * (COUNT_SLOTS + 1));
    await recount(app.database.db, name);
    expect(await countAll(app.database.db, name)).toBe(before);
    expect((await app.request('GET', `/api/${name}/`)).body.count).toBe(before);
  });
});
