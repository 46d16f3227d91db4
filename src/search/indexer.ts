import type { Knex } from 'knex';
import { collections } from '../collections';
import { indexPending, pendingTable } from './sets/indexer';

/**
 * The service's background indexer: indexes what this process's writes left pending soon after
 * them, and sweeps every table now and then for what others left. Search is exact either way;
 * this keeps the pending list, which every search checks with the scan's predicate, short.
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
  /** Records per batch. */
  batch?: number;
  /** Milliseconds a nudge waits, so that the writes of that while share one batch. */
  delayMs?: number;
  /** The first failure of a run of them (the database away, say); the next success is quiet. */
  onError?: (err: unknown) => void;
}

const running = new Set<Indexer>();

/** Called by the record writes (index.ts): every indexer of this process hears of it. */
export function pendingWritten(table: string): void {
  for (const indexer of running) indexer.nudge(table);
}

const FIELDS = new Map(collections.filter((c) => c.searchFields.length).map((c) => [c.name, c.searchFields]));

export function indexedFields(table: string): readonly string[] | undefined {
  return FIELDS.get(table);
}

export function startIndexer(db: Knex, options: IndexerOptions = {}): Indexer {
  const { sweepMs = 5000, batch = 1000, delayMs = 50, onError } = options;
  const due = new Set<string>();
  let active: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failing = false;

  async function drain(): Promise<void> {
    while (due.size && !stopped) {
      const [table] = due;
      due.delete(table);
      const fields = FIELDS.get(table);
      if (!fields) continue;
      try {
        // A look first: an empty list (most sweeps) costs one statement, not a transaction.
        if (await db(pendingTable(table)).first('id')) await indexPending(db, table, fields, { batch });
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
    if (active || stopped || timer) return;
    // A batch's cost is mostly per key, not per record: writes close together share one.
    timer = setTimeout(() => {
      timer = undefined;
      active = drain().finally(() => {
        active = undefined;
        if (due.size && !failing) run();
      });
    }, delayMs);
    timer.unref();
  }

  const sweep = setInterval(() => {
    for (const table of FIELDS.keys()) due.add(table);
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
      clearTimeout(timer);
      running.delete(indexer);
      await active;
    },
  };
  running.add(indexer);
  // What earlier runs left (a service stopped mid-batch, say).
  for (const table of FIELDS.keys()) due.add(table);
  run();
  return indexer;
}
