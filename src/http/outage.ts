import type { Logger } from '../logger';

/**
 * How long a request waits for the rate limit's count, wherever it is kept (the primary process,
 * Redis), before it passes uncounted: on a busy machine an answer can take seconds.
 */
export const COUNT_TIMEOUT_MS = 5000;

/**
 * The rate limit's store failing, logged once when it starts failing and once when it works
 * again: while it fails, every /api/ request passes uncounted, and a line for each would
 * drown the log.
 */
export class Outage {
  private down = false;
  constructor(
    private readonly logger: Logger,
    /** What keeps the counts: `Redis`, `the primary process`. */
    private readonly what: string,
  ) {}

  failed(err: unknown): void {
    if (this.down) return;
    this.down = true;
    // node-redis's timeout error has no message, only its class.
    const error = err instanceof Error ? err.message || err.constructor.name : String(err);
    this.logger.warn({ error }, `rate limit: ${this.what} cannot count requests; /api/ requests pass uncounted until it can`);
  }

  ok(): void {
    if (!this.down) return;
    this.down = false;
    this.logger.info(`rate limit: ${this.what} counts requests again`);
  }
}
