import { KnexTimeoutError } from 'knex';
import { ConcurrencyLimiter, type LimiterStats } from '../lib/concurrency';

// A concurrency limiter for MySQL searches whose statements visit every match: they wait for a
// slot instead of all running at once and passing their deadline together.
// See docs/adr/0006-costly-searches-wait.md.

/** Runs one of a search's costly statements when the limiter gives it a slot. */
export type Costly = <R>(work: () => Promise<R>) => Promise<R>;

/** Runs the statement at once: a list without a search makes no costly statement. */
export const inline: Costly = (work) => work();

/** A search's first costly statement found the search not admitted: the attempt ends, and it queues. */
class NotAdmitted extends Error {}

export type { LimiterStats };

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
