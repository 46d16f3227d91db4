import { KnexTimeoutError } from 'knex';
import { searchTuning } from './searchTuning';

// On MySQL a search's count that InnoDB FULLTEXT or the scan's predicate answers (a term in tens
// of thousands of records, a phrase), or a cursor page that has FULLTEXT visit every match,
// keeps a core of the server busy for hundreds of ms (records.ts takes the turns). Twenty
// at once (two workers' pools) share 2 cores, pass their deadline together and are answered 503
// after spending their CPU: `ouplip` under 32 connections at 1,000,000 posts, 3.4 requests a
// second and 23 of them answered 503; taking turns, one at a time in each process, 7.9 a second
// and none (BENCHMARKS.md). A turn not come by the search's deadline is the same 503 as a
// statement past it: no request waits, or holds its connection, longer. Nor shorter: refusing a
// turn that looked unable to finish in time (by what recent turns cost) was tried, and clients
// that ask again at once turned the refusals into hundreds or thousands of 503s a second, whose
// CPU slowed the counts past their deadline (BENCHMARKS.md). Waiting holds such clients back.

interface Waiter {
  admit(): void;
}

/** What /metrics shows of a Turns. */
export interface TurnStats {
  running: number;
  waiting: number;
  max: number;
}

/** Work that takes turns: at most `limit()` at once (at least 1), the rest in arrival order, each until its deadline. */
export class Turns {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly limit: () => number) {}

  /** Runs `work` in its turn; rejects with KnexTimeoutError, work not run, if the turn is not come by `until` (ms since the epoch). */
  async run<T>(until: number | undefined, work: () => Promise<T>): Promise<T> {
    if (!this.waiting.length && this.running < this.max()) this.running++;
    else {
      const turn = this.wait(until);
      this.admit();
      await turn;
    }
    try {
      return await work();
    } finally {
      this.running--;
      this.admit();
    }
  }

  stats(): TurnStats {
    return { running: this.running, waiting: this.waiting.length, max: this.max() };
  }

  private max(): number {
    return Math.max(1, this.limit());
  }

  private wait(until: number | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer =
        until === undefined
          ? undefined
          : setTimeout(
              () => {
                this.waiting.splice(this.waiting.indexOf(waiter), 1);
                reject(new KnexTimeoutError("Defined query timeout exceeded while waiting for a turn to read a search's matches"));
              },
              Math.max(0, until - Date.now()),
            );
      this.waiting.push(waiter);
    });
  }

  /** Gives free turns to the first waiters. */
  private admit(): void {
    while (this.waiting.length && this.running < this.max()) {
      this.running++;
      this.waiting.shift()!.admit();
    }
  }
}

/** This process's turns for a search's statements that visit every match, on MySQL (records.ts). */
export const searchTurns = new Turns(() => searchTuning.searchTurns);
