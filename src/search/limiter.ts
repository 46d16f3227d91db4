import { KnexTimeoutError } from 'knex';
import { searchTuning } from './tuning';

// A concurrency limiter for MySQL searches whose statements visit every match: they wait for a
// slot instead of all running at once and passing their deadline together.
// See docs/adr/0006-costly-searches-wait.md.

/** Runs one of a search's costly statements when the limiter gives it a slot. */
export type Costly = <R>(work: () => Promise<R>) => Promise<R>;

/** Runs the statement at once: a list without a search makes no costly statement. */
export const inline: Costly = (work) => work();

/** A search's first costly statement found the search not admitted: the attempt ends, and it queues. */
class NotAdmitted extends Error {}

interface Waiter {
  until: number | undefined;
  admit(): void;
  expire(): void;
}

/** What /metrics shows of the search limiter. */
export interface LimiterStats {
  running: number;
  waiting: number;
  max: number;
}

/** A semaphore: at most `limit()` (at least 1) holders at once, the rest queued in arrival order until their deadline. */
export class ConcurrencyLimiter {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly limit: () => number) {}

  /** Runs `work` holding a slot; rejects with KnexTimeoutError, work not run, if no slot is free by `until` (ms since the epoch). */
  async run<T>(until: number | undefined, work: () => Promise<T>): Promise<T> {
    await this.acquire(until);
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  /** Takes a slot if one is free and nobody is queued. */
  tryAcquire(): boolean {
    if (this.waiting.length || this.running >= this.max()) return false;
    this.running++;
    return true;
  }

  /** Waits for a slot; rejects with KnexTimeoutError if none is free by `until`. */
  acquire(until: number | undefined): Promise<void> {
    if (until !== undefined && Date.now() >= until) return Promise.reject(late());
    if (this.tryAcquire()) return Promise.resolve();
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
      this.admit(); // the limit may have been raised since the last slot was freed
    });
  }

  release(): void {
    this.running--;
    this.admit();
  }

  stats(): LimiterStats {
    return { running: this.running, waiting: this.waiting.length, max: this.max() };
  }

  private max(): number {
    return Math.max(1, this.limit());
  }

  /** Gives free slots to the first queued; one whose deadline passed (its timer not yet run) fails instead. */
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
 * The limits in effect: `concurrency` costly statements at once (`asked`, at most one fewer than
 * the pool's connections, at least 1), and `admitted` searches holding a connection (twice that,
 * also below the pool), so that queued searches leave a connection for other requests.
 */
export function searchLimits(asked: number, pool: number): { concurrency: number; admitted: number } {
  const concurrency = Math.max(1, Math.min(asked, pool - 1));
  return { concurrency, admitted: Math.max(concurrency, Math.min(2 * concurrency, pool - 1)) };
}

/**
 * Limits both a search's costly statements (`concurrency`) and the searches that hold a pooled
 * connection while they wait to run one (`admitted`): a search is admitted at its first costly
 * statement and holds its connection until it ends (searchLimits).
 */
export class SearchLimiter {
  private readonly statements: ConcurrencyLimiter;
  private readonly admissions: ConcurrencyLimiter;

  constructor(limit: () => number, pool: () => number = () => Infinity) {
    this.statements = new ConcurrencyLimiter(() => searchLimits(limit(), pool()).concurrency);
    this.admissions = new ConcurrencyLimiter(() => searchLimits(limit(), pool()).admitted);
  }

  /**
   * Runs a search, `attempt`, whose costly statements go through `costly`. If the search cannot be
   * admitted at its first one, the attempt ends (its connection goes back to the pool), the search
   * queues without a connection, and is attempted again from the start once admitted. Both are
   * given up at the deadline.
   */
  async search<T>(until: number | undefined, attempt: (costly: Costly) => Promise<T>): Promise<T> {
    let ended = false;
    // One timer for both attempts and the queue between them, so that an admission given just
    // at the deadline starts no costly statement.
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
    const limited: Costly = (work) => (ended ? Promise.reject(late()) : this.statements.run(until, work));
    let admitted = false;
    try {
      try {
        return await byDeadline(
          attempt((work) => {
            if (!admitted && !ended && !(admitted = this.admissions.tryAcquire())) return Promise.reject(new NotAdmitted());
            return limited(work);
          }),
        );
      } catch (err) {
        if (!(err instanceof NotAdmitted)) throw err;
      } finally {
        if (admitted) this.admissions.release();
      }
      return await this.admissions.run(until, () => byDeadline(attempt(limited)));
    } finally {
      ended = true;
      clearTimeout(timer);
    }
  }

  /** Runs `work` as one costly statement (ConcurrencyLimiter.run). */
  run<T>(until: number | undefined, work: () => Promise<T>): Promise<T> {
    return this.statements.run(until, work);
  }

  /** Costly statements running, and searches queued: for a slot with their connection, or for admission without. */
  stats(): LimiterStats {
    const statements = this.statements.stats();
    return { ...statements, waiting: statements.waiting + this.admissions.stats().waiting };
  }
}

function late(): KnexTimeoutError {
  return new KnexTimeoutError("Defined query timeout exceeded while waiting for a slot to read a search's matches");
}

/** This process's limiter for search statements that visit every match, on MySQL (records.ts). */
export const searchLimiter = new SearchLimiter(
  () => searchTuning.searchTurns,
  () => searchTuning.poolSize,
);
