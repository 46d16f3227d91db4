// Keeps a record table's sets exact: a write's triggers list the record as pending (with its
// text as the sets last saw it), and `indexPending` moves pending records into the sets in
// batches. Until then a search checks pending records with the scan's predicate.
import type { Knex } from 'knex';
import { isMysql } from '../../db/connection';
import { retrying } from '../../db/retry';
import { searchFold } from '../fold';
import { foldCollation, foldSql } from '../predicate';
import { idsIn } from './ids';
import { KeyGatherer, wordsOf } from './keys';
import { BLOCK_SIZE, changeSets, lockSets, readPairable, setPairable, type SetChange, setTables } from './store';

export function pendingTable(table: string): string {
  return `${table}_search_set_pending`;
}

/** The pending table's column that keeps a field's text as the sets hold it. */
function oldColumn(field: string): string {
  return `old_${field}`;
}

/**
 * SQL of the pending table and the triggers that fill it, for either database. `indexed`: 1 when
 * the sets hold the record (its old text then says what to take out), 0 for a record they lack.
 * The first write since the last batch decides; later ones find the row there and count
 * themselves in `writes`: a real change, so that on Galera, where a batch's locks are its node's
 * own, a write on another node conflicts with the batch that deletes the row, and one retries.
 */
export function pendingStatements(mysql: boolean, table: string, fields: readonly string[]): string[] {
  const p = pendingTable(table);
  const q = (name: string) => (mysql ? `\`${name}\`` : `"${name}"`);
  const olds = fields.map((f) => q(oldColumn(f)));
  const text = mysql ? 'LONGTEXT' : 'TEXT';
  const keep = mysql ? 'ON DUPLICATE KEY UPDATE writes = writes + 1' : 'ON CONFLICT (id) DO UPDATE SET writes = writes + 1';
  const insert = (row: 'NEW' | 'OLD', indexed: 0 | 1) =>
    `INSERT INTO ${q(p)} (id, indexed${olds.map((o) => `, ${o}`).join('')}) VALUES (${row}.id, ${indexed}${fields
      .map((f) => `, ${indexed ? `OLD.${q(f)}` : 'NULL'}`)
      .join('')}) ${keep}`;
  const unchanged = fields.map((f) => (mysql ? `NEW.${q(f)} <=> OLD.${q(f)}` : `NEW.${q(f)} IS OLD.${q(f)}`)).join(' AND ');
  const trigger = (name: string, when: string, body: string, only?: string) => {
    const head = `CREATE TRIGGER ${q(`${table}_set_${name}`)} AFTER ${when} ON ${q(table)} FOR EACH ROW`;
    if (mysql) return only ? `${head} IF ${only} THEN ${body}; END IF` : `${head} ${body}`;
    return `${head}${only ? ` WHEN ${only}` : ''} BEGIN ${body}; END`;
  };
  return [
    `CREATE TABLE ${q(p)} (id BIGINT ${mysql ? 'UNSIGNED ' : ''}NOT NULL PRIMARY KEY, indexed ${mysql ? 'TINYINT' : 'INTEGER'} NOT NULL, writes ${mysql ? 'BIGINT' : 'INTEGER'} NOT NULL DEFAULT 0${olds
      .map((o) => `, ${o} ${text} NULL`)
      .join('')})${mysql ? ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin' : ''}`,
    trigger('insert', 'INSERT', insert('NEW', 0)),
    trigger('update', 'UPDATE', insert('OLD', 1), `NOT (${unchanged})`),
    trigger('delete', 'DELETE', insert('OLD', 1)),
  ];
}

/** Records per batch: one transaction each. */
const BATCH = 1000;

interface PendingRow {
  id: number | string;
  indexed: number;
  [old: string]: unknown;
}

/**
 * Moves every pending record of `table` into its sets, in batches of `batch` (each its own
 * transaction); returns how many were indexed. Text is folded as the scan folds it: by the
 * collation's LOWER on MySQL, by searchFold on SQLite.
 */
export async function indexPending(
  db: Knex,
  table: string,
  fields: readonly string[],
  options: { batch?: number; onProgress?: (n: number) => void | Promise<void> } = {},
): Promise<number> {
  const batch = options.batch ?? BATCH;
  let done = 0;
  for (;;) {
    const n = await retrying(() => db.transaction((trx) => indexBatch(trx, table, fields, batch)));
    if (!n) return done;
    done += n;
    await options.onProgress?.(done);
  }
}

async function indexBatch(trx: Knex.Transaction, table: string, fields: readonly string[], batch: number): Promise<number> {
  const p = pendingTable(table);
  const mysql = isMysql(trx);
  await lockSets(trx, table);
  // Locked: a writer's trigger waits for this batch, then lists its record again with the text
  // this batch read as the sets' (the record's row before that writer's change).
  // Within one block of ids: a batch rewrites each set's row of that block once. Locked (as every
  // read before the records' text): MySQL's snapshot is taken at the first plain read, and one
  // taken before a writer's commit would read its record's text as before it.
  const firstQuery = trx(p).orderBy('id').first<{ id: number | string } | undefined>('id');
  const first = await (mysql ? firstQuery.forUpdate() : firstQuery);
  if (!first) return 0;
  const query = trx(p)
    .select('id', 'indexed', ...fields.map(oldColumn))
    .where('id', '<', (Math.floor(Number(first.id) / BLOCK_SIZE) + 1) * BLOCK_SIZE)
    .orderBy('id')
    .limit(batch);
  const pending = (await (mysql ? query.forUpdate() : query)) as PendingRow[];
  if (!pending.length) return 0;
  const ids = pending.map((r) => r.id);
  const collation = mysql ? await foldCollation(trx) : undefined;
  const fold = (column: string, as: string) => trx.raw(`${mysql ? foldSql(collation, '??') : '??'} AS ??`, [column, as]);
  const current: Record<string, unknown>[] = await trx(table)
    .whereRaw(idsIn(ids))
    .select('id', ...fields.map((f) => fold(f, f)));
  const olds = pending.filter((r) => Number(r.indexed) === 1);
  // MySQL folds in SQL, so it reads the old text again through the fold; SQLite has it already.
  const asFields = (r: PendingRow): Record<string, unknown> => ({
    id: r.id,
    ...Object.fromEntries(fields.map((f) => [f, r[oldColumn(f)]])),
  });
  const before: Record<string, unknown>[] = !olds.length
    ? []
    : mysql
      ? await trx(p)
          .whereRaw(idsIn(olds.map((r) => r.id)))
          .select<Record<string, unknown>[]>('id', ...fields.map((f) => fold(oldColumn(f), f)))
      : olds.map(asFields);
  const pairable = await readPairable(trx, table);
  const changes = diff(keysOfRows(before, fields, pairable, mysql), keysOfRows(current, fields, pairable, mysql));
  await changeSets(trx, table, changes);
  await trx(p).whereRaw(idsIn(ids)).delete();
  return pending.length;
}

/** Each key of these rows (by increasing id) with its ids. */
function keysOfRows(
  rows: Record<string, unknown>[],
  fields: readonly string[],
  pairable: ReadonlySet<string>,
  folded: boolean,
): Map<string, Uint32Array> {
  const gatherer = new KeyGatherer((w) => pairable.has(w));
  const sorted = [...rows].sort((a, b) => Number(a.id) - Number(b.id));
  for (const row of sorted) {
    const texts = fields.map((f) => row[f]).filter((v): v is string => typeof v === 'string');
    gatherer.add(Number(row.id), folded ? texts : texts.map(searchFold));
  }
  return new Map(gatherer.drain());
}

/** What takes each key's ids from `before` to `after`. */
export function diff(before: ReadonlyMap<string, Uint32Array>, after: ReadonlyMap<string, Uint32Array>): SetChange[] {
  const changes: SetChange[] = [];
  for (const [key, now] of after) {
    const was = before.get(key);
    const add = was ? minus(now, was) : now;
    const remove = was ? minus(was, now) : [];
    if (add.length || remove.length) changes.push({ key, add, remove });
  }
  for (const [key, was] of before) if (!after.has(key)) changes.push({ key, add: [], remove: was });
  return changes;
}

/** The ids of sorted `a` not in sorted `b`. */
function minus(a: Uint32Array, b: Uint32Array): number[] {
  const out: number[] = [];
  let j = 0;
  for (let i = 0; i < a.length; i++) {
    while (j < b.length && b[j] < a[i]) j++;
    if (j >= b.length || b[j] !== a[i]) out.push(a[i]);
  }
  return out;
}

/** Records whose words choose the pairable words, and how many they are. */
const PAIRABLE_SAMPLE = 20_000;
const PAIRABLE = 64;
/** A pairable word is in at least this share of the sample, which has at least PAIRABLE_MIN records. */
const PAIRABLE_SHARE = 0.05;
const PAIRABLE_MIN = 1000;

/**
 * Chooses the words whose adjacent pairs get sets (`"and the"` counted without a row): the
 * commonest in a sample of the table. Only while the sets are empty (before a load or a rebuild
 * indexes the records): pairs already stored stay true for the words they were chosen for.
 * Returns the words chosen, or undefined when the sets were not empty.
 */
export async function choosePairable(db: Knex, table: string, fields: readonly string[]): Promise<string[] | undefined> {
  return retrying(() =>
    db.transaction(async (trx) => {
      await lockSets(trx, table);
      if (await trx(setTables(table).sets).first('k')) return undefined;
      const mysql = isMysql(trx);
      const collation = mysql ? await foldCollation(trx) : undefined;
      const rows = (await trx(table)
        .select(fields.map((f) => trx.raw(`${mysql ? foldSql(collation, '??') : '??'} AS ??`, [f, f])))
        .orderBy('id', 'desc')
        .limit(PAIRABLE_SAMPLE)) as Record<string, unknown>[];
      const holding = new Map<string, number>();
      for (const row of rows) {
        const words = new Set<string>();
        for (const f of fields) {
          const text = row[f];
          if (typeof text === 'string') for (const { word } of wordsOf(mysql ? text : searchFold(text))) words.add(word);
        }
        for (const w of words) holding.set(w, (holding.get(w) ?? 0) + 1);
      }
      const chosen =
        rows.length < PAIRABLE_MIN
          ? []
          : [...holding]
              .filter(([, n]) => n >= PAIRABLE_SHARE * rows.length)
              .sort((a, b) => b[1] - a[1])
              .slice(0, PAIRABLE)
              .map(([w]) => w);
      await setPairable(trx, table, chosen);
      return chosen;
    }),
  );
}

/** How many records of `table` wait to be indexed. */
export async function pendingCount(db: Knex, table: string): Promise<number> {
  const [{ n }] = await db(pendingTable(table)).count<{ n: number | string }[]>({ n: '*' });
  return Number(n);
}
