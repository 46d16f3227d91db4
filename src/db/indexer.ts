import type { Knex } from 'knex';
import { collections } from '../collections';
import { indexPending, loadIndex, pendIndexedSince, wordTables } from './wordIndex';

/**
 * The service's background indexer on MySQL: applies the word index's pending list (records
 * created, re-texted or deleted since their docs row was written) soon after each such write in
 * this process, and sweeps every table now and then for what others left (SQL around the
 * service, a write whose transaction committed after its nudge, a batch lost to a crash). Search
 * is exact either way; this keeps the pending list, which every search also scans, short.
 *
 * Each run of batches first asks the server how long it has run: InnoDB sometimes left rows committed in
 * the first second after a restart out of its FULLTEXT index (wordIndex.ts). While a server has
 * run less than a few seconds the indexer writes nothing (its records stay pending, scanned);
 * then, when the server (re)started since the last sweep, or less than a minute before this
 * indexer began, it has InnoDB load the index (a FULLTEXT query) before any write, and writes
 * again the docs rows written since the server's start (by whoever wrote them).
 */
export interface Indexer {
  /** A write left `table` with pending records: index them soon. */
  nudge(table: string): void;
  /** Stops sweeping and waits for the batch under way. */
  stop(): Promise<void>;
}

export interface IndexerOptions {
  /** Milliseconds between sweeps of every table. */
  sweepMs?: number;
  /** Records per transaction. */
  batch?: number;
  /** The first failure of a run of them (the database away, say); the next success is quiet. */
  onError?: (err: unknown) => void;
}

const running = new Set<Indexer>();

/** Called by the record writes (records.ts): every indexer of this process hears of it. */
export function pendingWritten(table: string): void {
  for (const indexer of running) indexer.nudge(table);
}

const TABLES = collections.filter((c) => c.searchFields.length).map((c) => c.name);

/** Seconds a restarted server runs before its docs rows are written again (past the bad second). */
const SETTLE_SECONDS = 5;
/** A server that started this recently before the indexer did counts as restarted. */
const RECENT_SECONDS = 60;
/** Rows written this long before the server's start are written again too (clocks, rounding). */
const MARGIN_SECONDS = 2;

async function serverUptime(db: Knex): Promise<number> {
  const [rows] = (await db.raw("SHOW GLOBAL STATUS LIKE 'Uptime'")) as [{ Value: string }[]];
  return Number(rows[0].Value);
}

export function startIndexer(db: Knex, options: IndexerOptions = {}): Indexer {
  const { sweepMs = 5000, batch = 500, onError } = options;
  const due = new Set<string>();
  let active: Promise<void> | undefined;
  let stopped = false;
  let failing = false;
  /** When the server started, as last seen (ms, this clock); undefined before the first look. */
  let serverStart: number | undefined;
  let restarted = false;

  /** False while the server has not run long enough to write to. */
  async function checkRestart(): Promise<boolean> {
    const uptime = await serverUptime(db);
    const start = Date.now() - uptime * 1000;
    if (serverStart === undefined ? uptime < RECENT_SECONDS : Math.abs(start - serverStart) > 2000) restarted = true;
    serverStart = start;
    if (uptime < SETTLE_SECONDS) return false;
    if (!restarted) return true;
    for (const table of TABLES) {
      await loadIndex(db, table);
      await pendIndexedSince(db, table, uptime + MARGIN_SECONDS);
      due.add(table);
    }
    restarted = false;
    return true;
  }

  async function drain(): Promise<void> {
    // Before every run of batches, not only at sweeps: a nudge may come first after a restart.
    try {
      if (stopped || !(await checkRestart())) return due.clear();
    } catch (err) {
      if (!failing) onError?.(err);
      failing = true;
      return due.clear();
    }
    while (due.size && !stopped) {
      const [table] = due;
      due.delete(table);
      try {
        // A look first: an empty list (most sweeps) costs one statement, not a transaction.
        if (await db(wordTables(table).pending).first('id')) await indexPending(db, table, { batch });
        failing = false;
      } catch (err) {
        if (!failing) onError?.(err);
        failing = true;
        // Left for the next sweep: retrying at once would spin while the database is away.
        due.clear();
      }
    }
  }

  function run(): void {
    if (active || stopped) return;
    active = drain().finally(() => {
      active = undefined;
      if (due.size && !failing) run();
    });
  }

  const sweep = setInterval(() => {
    for (const table of TABLES) due.add(table);
    run();
  }, sweepMs);
  sweep.unref();

  const indexer: Indexer = {
    nudge(table) {
      due.add(table);
      run();
    },
    async stop() {
      stopped = true;
      clearInterval(sweep);
      running.delete(indexer);
      await active;
    },
  };
  running.add(indexer);
  // What earlier runs left (a service stopped mid-batch, say).
  for (const table of TABLES) due.add(table);
  run();
  return indexer;
}
