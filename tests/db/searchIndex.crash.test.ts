import { spawn } from 'node:child_process';
import { createTestDatabase, dialect, type TestDatabase } from '../helpers/db';
import { parseSearch } from '../../src/db/search';
import { scannedIds } from '../helpers/scan';
import { listRecords } from '../../src/db/records';
import type { OrderKey } from '../../src/db/order';

// The SQLite index lives in the same transactions as the rows: a writer killed with SIGKILL in
// the middle of its writes leaves the index answering exactly what a scan answers. (On MySQL the
// service scans, so there is no index to fall out of step.)
const maybe = dialect === 'sqlite' ? describe : describe.skip;

maybe('search index after a crash of the writer', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  test('kill -9 mid-writes, reopen: indexed search equals the scan', async () => {
    const filename = (database.config as { filename: string }).filename;
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'tests/helpers/searchWriter.ts', filename], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      await new Promise((r) => setTimeout(r, 700 + 300 * round));
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    const db = database.db;
    const [{ n }] = await db('posts').count({ n: '*' });
    expect(Number(n)).toBeGreaterThan(20);
    const spec = { table: 'posts', searchFields: ['title', 'content'] };
    const order = [
      { column: 'created_at', desc: true },
      { column: 'id', desc: true },
    ] as unknown as OrderKey[];
    for (const search of ['école', 'ÉCOLE', 'σοφός', 'STRASSE', 'straße', 'changed', 'body', '🎉 party', 'bêta', 'a']) {
      const terms = parseSearch(search);
      const ids = await scannedIds(db, 'posts', spec.searchFields, terms);
      const indexed = await listRecords(db, spec, { terms, filters: [], order, page: 1, pageSize: 10 });
      expect({ search, count: indexed.count, page: 'rows' in indexed ? indexed.rows.map((r) => Number(r.id)) : [] }).toEqual({
        search,
        count: ids.length,
        page: ids.slice(0, 10),
      });
    }
  });
});
