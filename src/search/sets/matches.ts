// A search's exact matches from the sets: what the sets decide for indexed records, and the
// scan's predicate for the rest (pending records and the planner's candidates).
import type { Knex } from 'knex';
import { RoaringBitmap32 } from 'roaring';
import { isMysql, poolKey } from '../../db/connection';
import { searchFold } from '../fold';
import { applySearch, foldCollation, foldSql } from '../predicate';
import { idsIn } from './ids';
import { pendingTable } from './indexer';
import { planTerms } from './plan';
import { setReader } from './store';

/** Ids per statement that checks rows with the scan's predicate. */
const CHECKED = 1000;

/** How a search was answered: for tests and the bench, which say where the time went. */
export interface MatchStats {
  sure: number;
  checked: number;
  pending: number;
}

export interface MatchOptions {
  /** Filled with how the search was answered. */
  stats?: MatchStats;
  /** Runs the check of `n` rows with the scan's predicate (the search limiter, for many). */
  check?: <T>(n: number, work: () => Promise<T>) => Promise<T>;
}

/**
 * The ids of the records of `table` whose search fields hold every term, exactly as the scan's
 * predicate says. Run it inside one transaction (one snapshot): the sets and the pending table
 * must be read as of one moment.
 */
export async function matchingIds(
  db: Knex | Knex.Transaction,
  table: string,
  fields: readonly string[],
  terms: readonly string[],
  options: MatchOptions = {},
): Promise<RoaringBitmap32> {
  const collation = await foldCollation(db);
  const folded = await foldTerms(db, terms, collation);
  const plan = await planTerms(setReader(db, table, poolKey(db)), folded);
  const pending = RoaringBitmap32.from(((await db(pendingTable(table)).pluck('id')) as (number | string)[]).map(Number));
  const sure = RoaringBitmap32.andNot(plan.sure, pending);
  const undecided = RoaringBitmap32.or(RoaringBitmap32.andNot(plan.candidates, plan.sure), pending);
  const checked = new RoaringBitmap32();
  const ids = undecided.toUint32Array();
  const check = async () => {
    for (let i = 0; i < ids.length; i += CHECKED) {
      const query = db(table).whereRaw(idsIn(ids.subarray(i, i + CHECKED)));
      applySearch(query, fields, terms, collation);
      checked.addMany(((await query.pluck('id')) as (number | string)[]).map(Number));
    }
  };
  if (ids.length) await (options.check ? options.check(ids.length, check) : check());
  const { stats } = options;
  if (stats) Object.assign(stats, { sure: sure.size, checked: ids.length, pending: pending.size });
  return RoaringBitmap32.or(sure, checked);
}

/** The terms as the scan folds them: the collation's LOWER on MySQL, searchFold on SQLite. */
async function foldTerms(db: Knex | Knex.Transaction, terms: readonly string[], collation: string | undefined): Promise<string[]> {
  if (!isMysql(db)) return terms.map(searchFold);
  const select = terms.map((_, i) => `${foldSql(collation)} AS t${i}`).join(', ');
  const [rows] = (await db.raw(`SELECT ${select}`, [...terms])) as [Record<string, string | Buffer>[]];
  return terms.map((_, i) => String(rows[0][`t${i}`]));
}
