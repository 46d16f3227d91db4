import { type Db, perPool } from '../../db/connection';
import type { SearchTuning } from '../tuning';
import { foldSql, wordTables } from './wordIndex';

/** A term in more than this share of the rows is common (see sampleTerms). */
export const COMMON_SHARE = 0.2;

/**
 * How long a table's sample is used while its newest record stays the same: the sample only
 * chooses how a search runs (never what it finds), and taking it is one of a search's costlier steps.
 */
const SAMPLE_TTL_MS = 10 * 60_000;
/** Terms whose hits are kept per table at most. */
const KEPT_TERMS = 10_000;

interface Sampled {
  /** The table's newest record (highest id) and the sample's size when it was taken. */
  newest: number | null;
  size: number;
  at: number;
  /** Records in the sample: fewer than its size when the table is smaller. */
  rows: number;
  /** Sampled records holding each term. */
  hits: Map<string, number>;
}

/** Per pool (its config) and table. */
const samples = new WeakMap<object, Map<string, Sampled>>();

export interface TermSample {
  common: Set<string>;
  /** See WordPlan.share. */
  share: number;
  /** A record was pending as the search began (wordSearch.ts). */
  pending: boolean;
}

/**
 * Which terms are common (in over COMMON_SHARE of a sample of the newest records), for which the
 * index costs more than the scan; also the share of rows that may match, and whether a record is
 * pending. Tables smaller than the sample have no common term.
 */
export async function sampleTerms(
  db: Db,
  table: string,
  fields: readonly string[],
  terms: readonly string[],
  collation: string | undefined,
  tuning: SearchTuning,
): Promise<TermSample> {
  const [state] = await db.select<{ pending: number | string | null; newest: number | string | null }[]>(
    db.raw('(?) AS pending', [db(wordTables(table).pending).select('id').limit(1)]),
    db.raw('(?) AS newest', [db(table).max('id')]),
  );
  const newest = state.newest === null ? null : Number(state.newest);
  const tables = perPool(samples, db, () => new Map<string, Sampled>());
  let kept = tables.get(table);
  const now = Date.now();
  if (!kept || kept.newest !== newest || kept.size !== tuning.sample || now - kept.at > SAMPLE_TTL_MS || kept.hits.size > KEPT_TERMS) {
    kept = { newest, size: tuning.sample, at: now, rows: 0, hits: new Map() };
    tables.set(table, kept);
  }
  const missing = terms.filter((t) => !kept.hits.has(t));
  if (missing.length) {
    const { rows, hits } = await sampleOf(db, table, fields, missing, collation, tuning.sample);
    kept.rows = rows;
    missing.forEach((t, i) => kept.hits.set(t, hits[i]));
  }
  const pending = state.pending !== null;
  if (kept.rows < tuning.sample) return { common: new Set(), share: 1, pending };
  const hits = terms.map((t) => kept.hits.get(t)!);
  return {
    common: new Set(terms.filter((_, i) => hits[i] > COMMON_SHARE * tuning.sample)),
    share: Math.min(1, (Math.min(...hits) + 1) / tuning.sample),
    pending,
  };
}

/** How many of the newest records hold each term, and how many were read. */
async function sampleOf(
  db: Db,
  table: string,
  fields: readonly string[],
  terms: readonly string[],
  collation: string | undefined,
  size: number,
): Promise<{ rows: number; hits: number[] }> {
  const fold = (x: string) => foldSql(collation, x);
  const holds = `(${fields.map(() => `INSTR(${fold('??')}, ${fold('?')}) > 0`).join(' OR ')})`;
  // Ids only in the derived table: one holding text columns is an on-disk (Aria) temporary table,
  // and MariaDB 10.11 crashed (signal 11, ha_maria::drop_table) freeing one of this query's when
  // the query timeout had killed it.
  const sample = db(table)
    .select('id')
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(size)
    .as('s');
  const sums = terms.map((t, i) => db.raw(`SUM(${holds}) AS ??`, [...fields.flatMap((f) => [f, t]), `t${i}`]));
  const [row] = await db
    .select<Record<string, number | string>[]>(db.raw('COUNT(*) AS n'), ...sums)
    .from(sample)
    .join(table, `${table}.id`, 's.id');
  return { rows: Number(row.n), hits: terms.map((_, i) => Number(row[`t${i}`] ?? 0)) };
}
