import type { Knex } from 'knex';
import type { OpenAPIV3 } from 'openapi-types';
import type { Collection } from '../collections';
import { clientProperties, loadSpec } from '../spec';
import { isMysql } from './connection';
import { BULK_COUNT_SLOT, COUNT_SLOT_VARIABLE, COUNT_SLOTS } from './counts';
import { orderIndexName } from './order';

/** The largest value of an INT column (MySQL's and SQLite's integers both hold it). */
const INT_MAX = 2_147_483_647;
/** DECIMAL(10, 2): the contract's prices, `0.00` to `99999999.99`. */
export const DECIMAL: readonly [number, number] = [10, 2];

/** A client field as the table stores it, read from the spec's write schema. */
export interface ColumnSpec {
  name: string;
  kind: 'varchar' | 'text' | 'date' | 'decimal' | 'integer' | 'boolean';
  /** varchar: characters (the schema's maxLength, or the longest enum value). */
  length?: number;
  nullable: boolean;
  unique: boolean;
  /** Compared ignoring case (emails): a case-folding collation on the column. */
  fold: boolean;
}

export function writeSchema(spec: OpenAPIV3.Document, c: Collection): OpenAPIV3.SchemaObject {
  return spec.components?.schemas?.[`${c.resource}Write`] as OpenAPIV3.SchemaObject;
}

/** The columns of a collection's client fields, in the write schema's order. */
export function recordColumns(spec: OpenAPIV3.Document, c: Collection): ColumnSpec[] {
  return Object.entries(clientProperties(spec, c.resource)).map(([name, s]) => {
    const base = {
      name,
      nullable: Boolean(s.nullable),
      unique: (c.uniqueFields as readonly string[]).includes(name),
      fold: s.format === 'email',
    };
    if ((c.decimalFields as readonly string[]).includes(name)) return { ...base, kind: 'decimal' };
    if (s.type === 'integer') {
      // An INT column: the schema must bound the value to it, or a larger one would reach the
      // database instead of being refused as a 400 (spec.rules.test.ts keeps every integer bounded).
      if (s.maximum === undefined || s.maximum > INT_MAX)
        throw new Error(`${c.resource}Write.${name}: an integer field needs a maximum of at most ${INT_MAX}`);
      return { ...base, kind: 'integer' };
    }
    if (s.type === 'boolean') return { ...base, kind: 'boolean' };
    if (s.format === 'date') return { ...base, kind: 'date' };
    if (s.enum) return { ...base, kind: 'varchar', length: Math.max(...s.enum.map((v) => String(v).length)) };
    if (s.type === 'string' && s.maxLength !== undefined) return { ...base, kind: 'varchar', length: s.maxLength };
    if (s.type === 'string') return { ...base, kind: 'text' };
    throw new Error(`${c.resource}Write.${name}: no column type for ${JSON.stringify(s)}`);
  });
}

/** utf8mb4 with a binary collation on MySQL, so that text compares as SQLite compares it. */
export function tableDefaults(t: Knex.CreateTableBuilder, mysql: boolean): void {
  if (!mysql) return;
  t.engine('InnoDB');
  t.charset('utf8mb4');
  t.collate('utf8mb4_bin');
}

function addColumn(t: Knex.CreateTableBuilder, table: string, col: ColumnSpec, mysql: boolean): void {
  let b: Knex.ColumnBuilder;
  if (col.kind === 'varchar' && col.fold) {
    // An ASCII-folding collation on each side: exact for emails, which admit ASCII only.
    b = mysql
      ? t.string(col.name, col.length).collate('utf8mb4_unicode_ci')
      : t.specificType(col.name, `varchar(${col.length}) COLLATE NOCASE`);
  } else if (col.kind === 'varchar') b = t.string(col.name, col.length);
  else if (col.kind === 'text') b = t.text(col.name, 'longtext');
  else if (col.kind === 'date') b = t.date(col.name);
  else if (col.kind === 'decimal') b = t.decimal(col.name, ...DECIMAL);
  else if (col.kind === 'boolean') b = t.boolean(col.name);
  else b = t.integer(col.name);
  if (col.nullable) b.nullable();
  else b.notNullable();
  if (col.unique) t.unique([col.name], { indexName: `${table}_${col.name}_unique` });
}

/** What a record table has of the schema's other parts (search's index, put in by src/schema.ts). */
export interface RecordTableParts {
  create(db: Knex, table: string, searchFields: readonly string[]): Promise<void>;
  drop(db: Knex, table: string): Promise<void>;
}

/**
 * A collection's table, whole: id, its client fields as the spec's write schema types them, the
 * timestamps, the version behind its ETags, the index of the default order, its exact count
 * (counter rows and the triggers that keep them), and `parts` (its search index). A migration
 * that adds a collection calls this.
 */
export async function createRecordTable(
  db: Knex,
  c: Collection,
  parts: RecordTableParts,
  spec: OpenAPIV3.Document = loadSpec(),
): Promise<void> {
  const mysql = isMysql(db);
  await db.schema.createTable(c.name, (t) => {
    tableDefaults(t, mysql);
    t.bigIncrements('id');
    for (const col of recordColumns(spec, c)) addColumn(t, c.name, col, mysql);
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.integer('version').notNullable().defaultTo(1);
    // Serves the default order (newest first, id as tie-breaker) without a sort.
    t.index(['created_at', 'id'], orderIndexName(c.name));
  });
  await addCounterRows(db, c.name);
  await addCountTriggers(db, c.name);
  await parts.create(db, c.name, c.searchFields);
}

export async function dropRecordTable(db: Knex, name: string, parts: RecordTableParts): Promise<void> {
  await parts.drop(db, name);
  await dropCountTriggers(db, name);
  await db('record_counts').where({ table_name: name }).delete();
  await db.schema.dropTableIfExists(name);
}

/** A table's counter rows, slot 0 holding its present row count, and the bulk loads' row. */
export async function addCounterRows(db: Knex, table: string): Promise<void> {
  const [{ n }] = await db(table).count({ n: '*' });
  const rows = Array.from({ length: COUNT_SLOTS }, (_, slot) => ({ table_name: table, slot, n: slot === 0 ? Number(n) : 0 }));
  await db('record_counts').insert(rows);
  await addBulkCounterRow(db, table);
}

/** The row that bulk loads count in (BULK_COUNT_SLOT), if the table has none yet. */
export async function addBulkCounterRow(db: Knex, table: string): Promise<void> {
  await db('record_counts').insert({ table_name: table, slot: BULK_COUNT_SLOT, n: 0 }).onConflict(['table_name', 'slot']).ignore();
}

/**
 * The counters move inside the statements that insert and delete (docs/adr/0003-counts-by-triggers.md).
 * On MySQL each connection bumps its own slot, so no two pool connections wait on one counter row,
 * unless the session names the bulk loads' slot (COUNT_SLOT_VARIABLE); SQLite uses slot 0.
 */
export async function addCountTriggers(db: Knex, table: string): Promise<void> {
  const mysql = isMysql(db);
  const slot = mysql ? `COALESCE(${COUNT_SLOT_VARIABLE}, CONNECTION_ID() % ${COUNT_SLOTS})` : '0';
  for (const [event, delta] of [
    ['INSERT', '+ 1'],
    ['DELETE', '- 1'],
  ]) {
    const name = `${table}_count_${event.toLowerCase()}`;
    await db.raw(
      `CREATE TRIGGER ${name} AFTER ${event} ON ${table} FOR EACH ROW ` +
        `${mysql ? '' : 'BEGIN '}UPDATE record_counts SET n = n ${delta} WHERE table_name = '${table}' AND slot = ${slot}${mysql ? '' : '; END'}`,
    );
  }
}

export async function dropCountTriggers(db: Knex, table: string): Promise<void> {
  for (const event of ['insert', 'delete']) await db.raw(`DROP TRIGGER IF EXISTS ${table}_count_${event}`);
}
