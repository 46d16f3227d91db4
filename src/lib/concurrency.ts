import { KnexTimeoutError } from 'knex';

// A semaphore with deadlines, for work that must wait its turn rather than all run at once
// (search statements that visit every match, exports). A wait past its deadline fails as a
// query timeout would, so callers answer it as one (503).

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

function late(): KnexTimeoutError {
  return new KnexTimeoutError('Defined query timeout exceeded while waiting for a slot');
}
