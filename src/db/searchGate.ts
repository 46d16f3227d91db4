import { KnexTimeoutError } from 'knex';
import { searchTuning } from './searchTuning';

// On MySQL a search's count that InnoDB FULLTEXT or the scan's predicate answers (a term in tens
// of thousands of records, a phrase), or a cursor page that has FULLTEXT visit every match,
// keeps a core of the server busy for hundreds of ms (records.ts takes the turns). Twenty
// at once (two workers' pools) share 2 cores, pass their deadline together and are answered 503
// after spending their CPU: `ouplip` under 32 connections at 1,000,000 posts, 3.4 requests a
// second and 23 of them answered 503; taking turns, one at a time in each process, 7.9 a second
// and none (BENCHMARKS.md). A turn not come by the search's deadline is the same 503 as a
// statement past it: no request waits longer. Nor shorter: refusing a turn that looked unable to
// finish in time (by what recent turns cost) was tried, and clients that ask again at once turned
// the refusals into hundreds or thousands of 503s a second, whose CPU slowed the counts past their
// deadline (BENCHMARKS.md). Waiting holds such clients back. A search waits without a connection
// (Turns.search): waiting in its snapshot, a flood of one costly search held the whole pool, and
// every other request waited for a connection behind it.

/** Runs one of a search's costly statements in the search's turn. */
export type Costly = <R>(work: () => Promise<R>) => Promise<R>;

/** Runs the statement at once: the search already holds its turn, or needs none. */
export const inline: Costly = (work) => work();

/** A search's costly statement found no free turn: its attempt ends, and the search waits for one. */
class NoTurnFree extends Error {}

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

  /**
   * Runs a search, `attempt`, whose costly statements go through `costly`. The first takes a free
   * turn, held to the search's end. When none is free, `costly` throws, which ends the attempt
   * and its snapshot (its connection goes back to the pool); the search waits for its turn
   * without one, then is attempted again from the start, in its turn, on the data as it is then:
   * held from its start, and given back at the deadline (the attempt's connection, whose wait
   * for the pool the deadline does not bound, would otherwise hold the turn past it).
   */
  async search<T>(until: number | undefined, attempt: (costly: Costly) => Promise<T>): Promise<T> {
    let holding = false;
    try {
      return await attempt(async (work) => {
        if (!holding) {
          if (this.waiting.length || this.running >= this.max()) throw new NoTurnFree();
          this.running++;
          holding = true;
        }
        return work();
      });
    } catch (err) {
      if (!(err instanceof NoTurnFree)) throw err;
    } finally {
      if (holding) this.release();
    }
    return this.run(until, () => byDeadline(until, attempt(inline)));
  }

  /** Runs `work` in its turn; rejects with KnexTimeoutError, work not run, if the turn is not come by `until` (ms since the epoch). */
  async run<T>(until: number | undefined, work: () => Promise<T>): Promise<T> {
    if (!this.waiting.length && this.running < this.max()) {
      if (until !== undefined && Date.now() >= until) throw late();
      this.running++;
    } else {
      const turn = this.wait(until);
      this.admit();
      await turn;
    }
    try {
      return await work();
    } finally {
      this.release();
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
                reject(late());
              },
              Math.max(0, until - Date.now()),
            );
      this.waiting.push(waiter);
    });
  }

  private release(): void {
    this.running--;
    this.admit();
  }

  /** Gives free turns to the first waiters. */
  private admit(): void {
    while (this.waiting.length && this.running < this.max()) {
      this.running++;
      this.waiting.shift()!.admit();
    }
  }
}

function late(): KnexTimeoutError {
  return new KnexTimeoutError("Defined query timeout exceeded while waiting for a turn to read a search's matches");
}

/** `work`'s answer, or KnexTimeoutError at `until`; abandoned then, its statements have 1 ms each left. */
function byDeadline<T>(until: number | undefined, work: Promise<T>): Promise<T> {
  if (until === undefined) return work;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), Math.max(0, until - Date.now()));
  });
  work.catch(() => undefined); // once abandoned, its failure is nobody's
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** This process's turns for a search's statements that visit every match, on MySQL (records.ts). */
export const searchTurns = new Turns(() => searchTuning.searchTurns);
