import type { Knex } from 'knex';
import { collections } from '../../../src/collections';
import { isMysql } from '../../../src/db/connection';
import { countAll } from '../../../src/db/counts';
import { type ColumnSpec, createRecordTable, dropRecordTable, recordColumns } from '../../../src/db/tables';
import { findRecord } from '../../../src/db/records';
import { recordSerializer } from '../../../src/handlers/serialize';
import { searchSchema } from '../../../src/search';
import { clientProperties, loadSpec } from '../../../src/spec';
import { useTestDatabase } from '../../helpers/db';

/** What a record table has of search's schema: its index. */
const searchIndex = searchSchema.schemaParts.recordTable;

// The live tables of both databases against the spec's write schemas: a length, nullability,
// uniqueness or enum changed on one side only fails here, not in a user's 500 or silent cut.
interface Live {
  type: string;
  length?: number;
  nullable: boolean;
  unique: boolean;
  fold: boolean;
}

async function liveColumns(db: Knex, table: string): Promise<Record<string, Live>> {
  const out: Record<string, Live> = {};
  if (isMysql(db)) {
    const [cols] = await db.raw(
      'SELECT COLUMN_NAME AS name, DATA_TYPE AS type, CHARACTER_MAXIMUM_LENGTH AS len, IS_NULLABLE AS nullable, COLLATION_NAME AS coll ' +
        'FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
      [table],
    );
    const [uniques] = await db.raw(
      'SELECT COLUMN_NAME AS name FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND NON_UNIQUE = 0 AND SEQ_IN_INDEX = 1 AND INDEX_NAME <> ?',
      [table, 'PRIMARY'],
    );
    const unique = new Set((uniques as { name: string }[]).map((u) => u.name));
    for (const c of cols as { name: string; type: string; len: number | null; nullable: string; coll: string | null }[]) {
      out[c.name] = {
        type: c.type,
        length: c.len ?? undefined,
        nullable: c.nullable === 'YES',
        unique: unique.has(c.name),
        fold: Boolean(c.coll?.endsWith('_ci')),
      };
    }
    return out;
  }
  const cols = await db.raw<{ name: string; type: string; nn: number }[]>('SELECT name, type, "notnull" AS nn FROM pragma_table_info(?)', [
    table,
  ]);
  const indexes = await db.raw<{ name: string }[]>('SELECT name FROM pragma_index_list(?) WHERE "unique" = 1', [table]);
  const unique = new Set<string>();
  for (const ix of indexes) {
    const parts = await db.raw<{ name: string }[]>('SELECT name FROM pragma_index_info(?)', [ix.name]);
    if (parts.length === 1) unique.add(parts[0].name);
  }
  const ddl = (await db.raw<{ sql: string }[]>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [table]))[0].sql;
  for (const c of cols) {
    const m = /^(\w+)(?:\((\d+))?/.exec(c.type.toLowerCase());
    const fold = new RegExp(`[\`"]${c.name}[\`"][^,]*collate nocase`, 'i').test(ddl);
    out[c.name] = {
      type: m?.[1] ?? c.type.toLowerCase(),
      length: m?.[2] ? Number(m[2]) : undefined,
      nullable: c.nn === 0,
      unique: unique.has(c.name),
      fold,
    };
  }
  return out;
}

function isEnum(resource: string, field: string): boolean {
  // Resolved: a field with a default is a $ref to a schema that holds it (ADR 0015).
  return Boolean(clientProperties(loadSpec(), resource)[field]?.enum);
}

/** The live types each kind of column may have (knex spells some differently per dialect). */
const TYPES: Record<ColumnSpec['kind'], string[]> = {
  varchar: ['varchar'],
  text: ['longtext', 'text'],
  date: ['date'],
  decimal: ['decimal', 'float'],
  integer: ['int', 'integer'],
  boolean: ['tinyint', 'boolean'],
};

describe.each(collections.map((c) => [c.name, c] as const))('the %s table', (_name, c) => {
  const t = useTestDatabase();
  let live: Record<string, Live>;
  const expected = recordColumns(loadSpec(), c);
  beforeAll(async () => {
    live = await liveColumns(t.db, c.name);
  });

  // The name keys the table's counters and its idempotency keys: MySQL refuses a longer one at
  // the first write, and SQLite stores it whatever its length.
  test('its name fits the columns that key its counters and idempotency keys', async () => {
    const lengths = [(await liveColumns(t.db, 'record_counts')).table_name, (await liveColumns(t.db, 'idempotency_keys')).collection];
    for (const { length } of lengths) expect(c.name.length).toBeLessThanOrEqual(length!);
  });

  test('has exactly the client fields of the write schema, and the service columns', () => {
    expect(Object.keys(live).sort()).toEqual([...expected.map((e) => e.name), 'id', 'created_at', 'updated_at', 'version'].sort());
  });

  test.each(expected.map((e) => [e.name, e] as const))('%s is stored as the spec types it', (_field, e) => {
    const col = live[e.name];
    expect({
      type: TYPES[e.kind].includes(col.type),
      length: col.length,
      nullable: col.nullable,
      unique: col.unique,
      fold: col.fold,
    }).toEqual({
      type: true,
      length: e.kind === 'varchar' ? (col.length! >= e.length! ? col.length : e.length) : col.length,
      nullable: e.nullable,
      unique: e.unique,
      fold: e.fold,
    });
    // A bounded string is stored with exactly its bound (an enum's column may be wider than its longest value).
    if (e.kind === 'varchar' && !isEnum(c.resource, e.name)) {
      expect(col.length).toBe(e.length);
    }
  });
});

// A collection added later gets its table from createRecordTable: for each of the five, what it
// builds from the declaration and the spec is what the migrations built by hand, counters included.
describe.each(collections.map((c) => [c.name, c] as const))('createRecordTable for %s', (name, c) => {
  const t = useTestDatabase();
  const copy = { ...c, name: `${name}_copy` };
  beforeAll(async () => {
    await createRecordTable(t.db, copy, searchIndex);
  });

  test('builds the columns the migrations built (an enum column as wide as its longest value)', async () => {
    const enums = new Set(
      recordColumns(loadSpec(), c)
        .filter((col) => col.kind === 'varchar' && isEnum(c.resource, col.name))
        .map((col) => col.name),
    );
    const widthless = (cols: Record<string, Live>) =>
      Object.fromEntries(Object.entries(cols).map(([k, v]) => [k, enums.has(k) ? { ...v, length: 0 } : v]));
    expect(widthless(await liveColumns(t.db, copy.name))).toEqual(widthless(await liveColumns(t.db, name)));
  });

  test('keeps the count through inserts and deletes, and drops cleanly', async () => {
    const row = Object.fromEntries(recordColumns(loadSpec(), c).map((col) => [col.name, sample(col)]));
    const stamp = '2026-01-01 00:00:00.000';
    await t.db(copy.name).insert({ ...row, created_at: stamp, updated_at: stamp });
    expect(await countAll(t.db, copy.name)).toBe(1);
    await t.db(copy.name).delete();
    expect(await countAll(t.db, copy.name)).toBe(0);
    await dropRecordTable(t.db, copy.name, searchIndex);
    expect(await t.db.schema.hasTable(copy.name)).toBe(false);
    await createRecordTable(t.db, copy, searchIndex);
  });
});

function sample(col: ColumnSpec): unknown {
  if (col.nullable) return null;
  if (col.kind === 'integer' || col.kind === 'decimal') return 1;
  if (col.kind === 'date') return '2026-01-01';
  if (col.kind === 'boolean') return true;
  return col.fold ? 'a@example.com' : 'a';
}

// No collection has a boolean field yet; one added later gets a column that stores it and a
// record that answers `true`/`false` (both databases store 0 or 1), `null` when nullable.
describe('a boolean field', () => {
  const tasks = collections.find((c) => c.name === 'tasks')!;
  const flagged = { ...tasks, name: 'tasks_flagged' };
  const spec = structuredClone(loadSpec());
  for (const schema of ['Task', 'TaskWrite']) {
    const props = (spec.components!.schemas![schema] as { properties: Record<string, object> }).properties;
    props.pinned = { type: 'boolean', default: false };
    props.archived = { type: 'boolean', nullable: true };
  }
  const t = useTestDatabase();
  beforeAll(async () => {
    await createRecordTable(t.db, flagged, searchIndex, spec);
  });

  test('is a boolean column', async () => {
    const cols = recordColumns(spec, flagged).filter((col) => ['pinned', 'archived'].includes(col.name));
    expect(cols.map(({ name, kind, nullable }) => ({ name, kind, nullable }))).toEqual([
      { name: 'pinned', kind: 'boolean', nullable: false },
      { name: 'archived', kind: 'boolean', nullable: true },
    ]);
    const live = await liveColumns(t.db, flagged.name);
    expect([live.pinned, live.archived].map((col) => TYPES.boolean.includes(col.type))).toEqual([true, true]);
  });

  test.each([
    [true, null],
    [false, true],
    [true, false],
  ])('pinned %s, archived %s: answered as sent', async (pinned, archived) => {
    const row = Object.fromEntries(recordColumns(spec, flagged).map((col) => [col.name, sample(col)]));
    const stamp = '2026-01-01 00:00:00.000';
    const [id] = await t.db(flagged.name).insert({ ...row, pinned, archived, created_at: stamp, updated_at: stamp });
    const stored = await findRecord(t.db, flagged.name, Number(id));
    expect(recordSerializer(spec, flagged)(stored!)).toMatchObject({ pinned, archived });
  });
});
