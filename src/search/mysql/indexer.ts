import type { Knex } from 'knex';
import { collections } from '../../collections';
import { chooseDenseWords } from './denseWords';
import { indexPending, wordTables } from './wordIndex';
import type { SearchTuning } from '../tuning';

/**
 * The service's background indexer on MySQL: indexes what this process's writes left pending soon
 * after them, and sweeps every table now and then for what others left. Search is exact either
 * way; this keeps the pending list, which every search scans, short.
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
  /** Milliseconds between choices of every table's dense words (denseWords.ts); the first at start. */
  chooseMs?: number;
  /** The first failure of a run of them (the database away, say); the next success is quiet. */
  onError?: (err: unknown) => void;
  /** What the dense words' choice reads (tuning.ts); default: the defaults. */
  tuning?: Pick<SearchTuning, 'sample' | 'denseShare'>;
}

const running = new Set<Indexer>();

/** Called by the record writes (recordsWritten): every indexer of this process hears of it. */
export function pendingWritten(table: string): void {
  for (const indexer of running) indexer.nudge(table);
}

const TABLES = collections.filter((c) => c.searchFields.length).map((c) => c.name);

export function startIndexer(db: Knex, options: IndexerOptions = {}): Indexer {
  const { sweepMs = 5000, batch = 500, chooseMs = 10 * 60_000, onError, tuning } = options;
  const due = new Set<string>();
  let choosing: Promise<void> | undefined;
  let active: Promise<void> | undefined;
  let stopped = false;
  let failing = false;

  async function drain(): Promise<void> {
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

  // Words grow dense (or stop being) as tables fill through the service. Beside the drain, which
  // under a steady stream of writes never ends; each choice is safe beside indexers.
  function choose(): void {
    if (choosing || stopped) return;
    choosing = (async () => {
      for (const table of TABLES) {
        if (stopped) return;
        await chooseDenseWords(db, table, tuning);
      }
    })()
      .catch((err: unknown) => {
        // One report for a run of failures, the drain's and these alike.
        if (!failing) onError?.(err);
        failing = true;
      })
      .finally(() => {
        choosing = undefined;
      });
  }
  const chooser = setInterval(choose, chooseMs);
  chooser.unref();

  const indexer: Indexer = {
    nudge(table) {
      due.add(table);
      run();
    },
    async stop() {
      stopped = true;
      clearInterval(sweep);
      clearInterval(chooser);
      running.delete(indexer);
      await Promise.all([active, choosing]);
    },
  };
  running.add(indexer);
  // What earlier runs left (a service stopped mid-batch, say).
  for (const table of TABLES) due.add(table);
  run();
  choose();
  return indexer;
}
