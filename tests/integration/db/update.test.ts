import { collections } from '../../../src/collections';
import { findRecord, insertRecord, type Queryable, updateRecord, type Row, type VersionCondition } from '../../../src/db/records';
import { dbTimestamp } from '../../../src/db/time';
import { recordSerializer } from '../../../src/handlers/serialize';
import { loadSpec } from '../../../src/spec';
import { pendingTable } from '../../../src/search/sets/indexer';
import { useTestDatabase, logStatements } from '../../helpers/db';
import { fixtures } from '../../helpers/fixtures';

// An update is a read and a write on the condition that the version is still the one read; the
// answer is built from the two. Another write in between sends it through a transaction with a
// read-back instead. Both must answer what the record now holds.

const spec = loadSpec();
const t = useTestDatabase();
let statements: string[];
beforeAll(() => {
  statements = logStatements(t.db);
});

const isBegin = (sql: string) => /^\s*(begin|start transaction)/i.test(sql);

let serial = 0;
async function insert(name: string, body: Record<string, unknown>): Promise<Row> {
  const at = dbTimestamp();
  return insertRecord(t.db, name, { ...body, created_at: at, updated_at: at });
}

describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  const serialize = recordSerializer(
    spec,
    collections.find((c) => c.name === name)!,
  );
  /** What the record holds now, as a client reads it. */
  const stored = async (id: number) => serialize((await findRecord(t.db, name, id))!);
  /** The fixture's PATCH without its search fields: a change the word index has no part in. */
  const unsearched = Object.fromEntries(Object.entries(f.patch).filter(([k]) => !f.searchFields.includes(k)));
  if (!Object.keys(unsearched).length) unsearched[f.unsearchedText!] = 'changed';

  test('a change to fields that are not searched: two statements, no transaction, the stored record answered', async () => {
    const row = await insert(name, { ...f.defaults, ...f.valid(++serial) });
    statements.length = 0;
    const updated = await updateRecord(t.db, name, row.id as number, { ...unsearched, updated_at: dbTimestamp() });
    expect(statements).toHaveLength(2);
    expect(statements.some(isBegin)).toBe(false);
    expect(updated!.version).toBe(2);
    expect(serialize(updated!)).toEqual(await stored(row.id as number));
  });

  test('a change to searched text: two statements too, the record left pending in the word index (MySQL)', async () => {
    const row = await insert(name, { ...f.defaults, ...f.valid(++serial) });
    const text = Object.fromEntries(f.searchFields.map((field) => [field, `changed ${field} ${serial}`]));
    statements.length = 0;
    const updated = await updateRecord(t.db, name, row.id as number, { ...text, updated_at: dbTimestamp() });
    expect(statements).toHaveLength(2);
    expect(serialize(updated!)).toEqual(await stored(row.id as number));
    expect((await t.db(pendingTable(name)).where({ id: row.id }).pluck('id')).map(Number)).toEqual([row.id]);
  });

  test('20 concurrent updates: each answers its own write under its own version, the last one stays', async () => {
    const row = await insert(name, { ...f.defaults, ...f.valid(++serial) });
    // Each writer's own mark: its updated_at.
    const stamps = Array.from({ length: 20 }, (_, i) => dbTimestamp(Date.UTC(2030, 0, 1, 0, 0, i)));
    statements.length = 0;
    const written = await Promise.all(stamps.map((at) => updateRecord(t.db, name, row.id as number, { ...unsearched, updated_at: at })));
    written.forEach((r, i) => expect(serialize(r!).updated_at).toBe(serialize({ ...row, updated_at: stamps[i] }).updated_at));
    expect(written.map((r) => r!.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    expect(serialize(written.find((r) => r!.version === 21)!)).toEqual(await stored(row.id as number));
    // The writers read the same version, so all but one went through the transaction.
    expect(statements.filter(isBegin).length).toBeGreaterThan(0);
  });

  test('a version condition that the record no longer meets changes nothing', async () => {
    const row = await insert(name, { ...f.defaults, ...f.valid(++serial) });
    await updateRecord(t.db, name, row.id as number, { updated_at: dbTimestamp() });
    const before = await stored(row.id as number);
    expect(await updateRecord(t.db, name, row.id as number, { ...unsearched }, { versions: [1] })).toBeUndefined();
    expect(await stored(row.id as number)).toEqual(before);
    expect(await updateRecord(t.db, name, 1e9, { ...unsearched })).toBeUndefined();
  });

  // On a record at version 2: If-Match's versions, If-None-Match's `except`, and both. Outside a
  // transaction the condition is checked on the row read; inside one, in the UPDATE's WHERE.
  const conditions: [string, VersionCondition, boolean][] = [
    ['versions [2]', { versions: [2] }, true],
    ['versions [1]', { versions: [1] }, false],
    ['except [2]', { except: [2] }, false],
    ['except [1, 3]', { except: [1, 3] }, true],
    ['except []', { except: [] }, true],
    ["except '*'", { except: '*' }, false],
    ['versions [2], except [1]', { versions: [2], except: [1] }, true],
    ['versions [2], except [2]', { versions: [2], except: [2] }, false],
  ];
  describe.each([
    ['outside a transaction', (run: (db: Queryable) => Promise<Row | undefined>) => run(t.db)],
    ['inside a transaction', (run: (db: Queryable) => Promise<Row | undefined>) => t.db.transaction((trx) => run(trx))],
  ])('%s', (_where, within) => {
    test.each(conditions)('%s: applied %s', async (_n, condition, applies) => {
      const row = await insert(name, { ...f.defaults, ...f.valid(++serial) });
      await updateRecord(t.db, name, row.id as number, { updated_at: dbTimestamp() });
      const before = await stored(row.id as number);
      const updated = await within((db) => updateRecord(db, name, row.id as number, { ...unsearched }, condition));
      expect(updated?.version).toBe(applies ? 3 : undefined);
      if (!applies) expect(await stored(row.id as number)).toEqual(before);
      else expect(serialize(updated!)).toEqual(await stored(row.id as number));
    });
  });
});
