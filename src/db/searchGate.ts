import { KnexTimeoutError } from 'knex';
import { searchTuning } from './searchTuning';

// On MySQL a search's count that InnoDB FULLTEXT or the scan's predicate answers (a term in tens
// of thousands of records, a phrase), or a cursor page that has FULLTEXT visit every match,
// keeps a core of the server busy for hundreds of ms (records.ts marks them costly). Twenty
// at once (two workers' pools) share 2 cores, pass their deadline together and are answered 503
// after spending their CPU: `ouplip` under 32 connections at 1,000,000 posts, 3.4 requests a
// second and 23 of them answered 503; taking turns, one at a time in each process, 7.9 a second
// and none (BENCHMARKS.md). A turn not come by the search's deadline is the same 503 as a
// statement past it: no request waits longer. Nor shorter: refusing a turn that looked unable to
// finish in time (by what recent turns cost) was tried, and clients that ask again at once turned
// the refusals into hundreds or thousands of 503s a second, whose CPU slowed the counts past their
// deadline (BENCHMARKS.md). Waiting holds such clients back.
//
// Waiting in its snapshot, each search held a pooled connection, and a flood of one costly search
// held the whole pool: every other request waited for a connection behind it. Now only as many
// searches as there are turns wait with their connection, planned and ready to run; the rest wait
// for their place without one (SearchTurns.search). Running again in its place, a search plans
// while the turns are busy, so the turns seldom wait for a plan.

/** Runs one of a search's costly statements in its turn. */
export type Costly = <R>(work: () => Promise<R>) => Promise<R>;

/** Runs the statement at once: a list without a search makes none that takes a turn. */
export const inline: Costly = (work) => work();

/** A search's costly statement found no place free: its attempt ends, and the search waits for one. */
class NoPlaceFree extends Error {}

interface Waiter {
  until: number | undefined;
  admit(): void;
  expire(): void;
}

/** What /metrics shows of the search turns. */
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
    await this.take(until);
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  /** Takes a turn if one is free and nobody waits. */
  tryTake(): boolean {
    if (this.waiting.length || this.running >= this.max()) return false;
    this.running++;
    return true;
  }

  /** Waits for a turn; rejects with KnexTimeoutError if it is not come by `until`. */
  take(until: number | undefined): Promise<void> {
    if (until !== undefined && Date.now() >= until) return Promise.reject(late());
    if (this.tryTake()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        until,
        admit: () => {
          clearTimeout(timer);
          resolve();
        },
        expire: () => {
          clearTimeout(timer);
          reject(late());
        },
      };
      const timer =
        until === undefined
          ? undefined
          : setTimeout(() => {
              this.waiting.splice(this.waiting.indexOf(waiter), 1);
              waiter.expire();
            }, until - Date.now());
      this.waiting.push(waiter);
      this.admit(); // the limit may have been raised since the last turn ended
    });
  }

  release(): void {
    this.running--;
    this.admit();
  }

  stats(): TurnStats {
    return { running: this.running, waiting: this.waiting.length, max: this.max() };
  }

  private max(): number {
    return Math.max(1, this.limit());
  }

  /** Gives free turns to the first waiters; one whose deadline passed (its timer not yet run) fails instead. */
  private admit(): void {
    while (this.waiting.length && this.running < this.max()) {
      const next = this.waiting.shift()!;
      if (next.until !== undefined && Date.now() >= next.until) next.expire();
      else {
        this.running++;
        next.admit();
      }
    }
  }
}

/**
 * The turns (`asked`, at most one fewer than the pool's connections, at least 1) and the places
 * (twice the turns, at most one fewer than the pool's connections, at least the turns): waiting
 * searches leave a connection for other requests, but with a pool of one, which has none to
 * spare. With fewer places than twice the turns, fewer searches wait ready, planned, for a turn.
 */
export function turnsInEffect(asked: number, pool: number): { turns: number; places: number } {
  const turns = Math.max(1, Math.min(asked, pool - 1));
  return { turns, places: Math.max(turns, Math.min(2 * turns, pool - 1)) };
}

/**
 * Turns for searches' costly statements, and places for the searches that make them: a search
 * holds a place, and its connection, from its first costly statement to its end; there are twice
 * as many places as turns (those running and as many ready to), both below `pool`, the
 * connections a process has (turnsInEffect).
 */
export class SearchTurns {
  private readonly turns: Turns;
  private readonly places: Turns;

  constructor(limit: () => number, pool: () => number = () => Infinity) {
    this.turns = new Turns(() => turnsInEffect(limit(), pool()).turns);
    this.places = new Turns(() => turnsInEffect(limit(), pool()).places);
  }

  /**
   * Runs a search, `attempt`, whose costly statements go through `costly`, each in its turn.
   * The first takes a free place. When none is free, `costly` throws, which ends the attempt and
   * its snapshot (its connection goes back to the pool); the search waits for its place without
   * one, then is attempted again from the start, on the data as it is then. Either attempt is
   * given up at the deadline, place and all (a wait for a pool connection is not bounded by it),
   * and what it still runs then takes no place or turn.
   */
  async search<T>(until: number | undefined, attempt: (costly: Costly) => Promise<T>): Promise<T> {
    let ended = false;
    // One timer for both attempts and the wait for a place between them, not within() around
    // each attempt: at the deadline it ends the search even during that wait, so that a place
    // given just then (the clock a moment short of it) starts no costly statement.
    let timer: NodeJS.Timeout | undefined;
    const deadline =
      until === undefined
        ? undefined
        : new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              ended = true;
              reject(late());
            }, until - Date.now());
          });
    deadline?.catch(() => undefined); // no attempt left to race it
    const byDeadline = <R>(work: Promise<R>): Promise<R> => {
      if (!deadline) return work;
      work.catch(() => undefined); // once abandoned, its failure is nobody's
      return Promise.race([work, deadline]);
    };
    const inTurn: Costly = (work) => (ended ? Promise.reject(late()) : this.turns.run(until, work));
    let placed = false;
    try {
      try {
        return await byDeadline(
          attempt((work) => {
            if (!placed && !ended && !(placed = this.places.tryTake())) return Promise.reject(new NoPlaceFree());
            return inTurn(work);
          }),
        );
      } catch (err) {
        if (!(err instanceof NoPlaceFree)) throw err;
      } finally {
        if (placed) this.places.release();
      }
      return await this.places.run(until, () => byDeadline(attempt(inTurn)));
    } finally {
      ended = true;
      clearTimeout(timer);
    }
  }

  /** Runs `work` in a turn of its own (Turns.run). */
  run<T>(until: number | undefined, work: () => Promise<T>): Promise<T> {
    return this.turns.run(until, work);
  }

  /** Statements running in their turn, and searches waiting: for their turn with their connection, or for their place without. */
  stats(): TurnStats {
    const turns = this.turns.stats();
    return { ...turns, waiting: turns.waiting + this.places.stats().waiting };
  }
}

function late(): KnexTimeoutError {
  return new KnexTimeoutError("Defined query timeout exceeded while waiting for a turn to read a search's matches");
}

/** This process's turns for a search's statements that visit every match, on MySQL (records.ts). */
export const searchTurns = new SearchTurns(
  () => searchTuning.searchTurns,
  () => searchTuning.poolSize,
);
