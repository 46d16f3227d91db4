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
 * the pool's connections, at least 1), `admitted` costly searches holding a connection (twice
 * that, also below the pool), and `connected` searches of any kind holding one (one fewer than
 * the pool), so that searches, queued or running, leave a connection for other requests.
 */
export function searchLimits(asked: number, pool: number): { concurrency: number; admitted: number; connected: number } {
  const concurrency = Math.max(1, Math.min(asked, pool - 1));
  const connected = Math.max(1, pool - 1);
  return { concurrency, admitted: Math.max(concurrency, Math.min(2 * concurrency, pool - 1)), connected };
}

/**
 * Limits a search's costly statements (`concurrency`), the searches that hold a pooled
 * connection while they wait to run one (`admitted`), and the searches that hold one at all
 * (`connected`): a search is admitted at its first costly statement and holds its connection
 * until it ends (searchLimits). A search waiting for either place holds no connection.
 */
export class SearchLimiter {
  private readonly statements: ConcurrencyLimiter;
  private readonly admissions: ConcurrencyLimiter;
  private readonly connections: ConcurrencyLimiter;

  constructor(limit: () => number, pool: () => number = () => Infinity) {
    this.statements = new ConcurrencyLimiter(() => searchLimits(limit(), pool()).concurrency);
    this.admissions = new ConcurrencyLimiter(() => searchLimits(limit(), pool()).admitted);
    this.connections = new ConcurrencyLimiter(() => searchLimits(limit(), pool()).connected);
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
    const releaseAdmission = () => {
      if (admitted) this.admissions.release();
      admitted = false;
    };
    // The attempt takes its connection inside: the place is held while it may hold one. Its
    // admission goes back first, so that the search given the place next finds it free.
    const connected = (run: () => Promise<T>) =>
      this.connections.run(until, async () => {
        try {
          return await byDeadline(run());
        } finally {
          releaseAdmission();
        }
      });
    try {
      try {
        return await connected(() =>
          attempt((work) => {
            if (!admitted && !ended && !(admitted = this.admissions.tryAcquire())) return Promise.reject(new NotAdmitted());
            return limited(work);
          }),
        );
      } catch (err) {
        if (!(err instanceof NotAdmitted)) throw err;
      }
      await this.admissions.acquire(until);
      admitted = true;
      return await connected(() => attempt(limited));
    } finally {
      releaseAdmission();
      ended = true;
      clearTimeout(timer);
    }
  }

  /** Runs `work` as one costly statement (ConcurrencyLimiter.run). */
  run<T>(until: number | undefined, work: () => Promise<T>): Promise<T> {
    return this.statements.run(until, work);
  }

  /** Costly statements running, and searches queued: for a slot with their connection, or for a place without. */
  stats(): LimiterStats {
    const statements = this.statements.stats();
    return { ...statements, waiting: statements.waiting + this.admissions.stats().waiting + this.connections.stats().waiting };
  }
}

function late(): KnexTimeoutError {
  return new KnexTimeoutError("Defined query timeout exceeded while waiting for a slot to read a search's matches");
}
