// The rate limit's counts in Redis (REDIS_URL), so that every worker of every host behind a
// balancer draws on one quota per client. Redis is a helper here, never a dependency of a
// request: while it cannot be reached, requests pass uncounted (see access.ts) instead of
// waiting for it or failing, and the log says so once per outage, not once per request.
import type { IncrementResponse, Options, Store } from 'express-rate-limit';
import { type RedisReply, RedisStore } from 'rate-limit-redis';
import { createClient, TimeoutError } from 'redis';
import type { RedisConfig } from '../config';
import { within } from '../lib/within';
import type { Logger } from '../logger';
import { COUNT_TIMEOUT_MS, Outage } from './outage';

/** How long a connection attempt may take before the next one (the client keeps trying). */
const CONNECT_TIMEOUT_MS = 2000;
/** Commands waiting for Redis, at most (see commandsQueueMaxLength). */
const COMMANDS_QUEUE_MAX = 1000;
/** After a count timed out (Redis connected but not answering), requests pass without asking for this long. */
const SKIP_AFTER_TIMEOUT_MS = 5000;

export interface RedisCounts {
  /** A store for one limiter (express-rate-limit refuses to share one), keys under `prefix`. */
  store(prefix: string): Store;
  /** Resolves once connected, or after the connect timeout: the service starts either way. */
  ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects in the background, again and again while Redis is away. No offline queue: a count
 * asked for while disconnected fails at once rather than waiting for a reconnect.
 */
export function connectRedisCounts(redis: RedisConfig, logger: Logger): RedisCounts {
  const outage = new Outage(logger.child({ redis: redis.where }), 'Redis');
  const client = createClient({
    url: redis.url,
    disableOfflineQueue: true,
    // Counts abandoned at their deadline stay queued while a silent Redis keeps the connection:
    // past this many, a count fails at once instead of the queue growing.
    commandsQueueMaxLength: COMMANDS_QUEUE_MAX,
    commandOptions: { timeout: COUNT_TIMEOUT_MS },
    socket: {
      connectTimeout: CONNECT_TIMEOUT_MS,
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000),
    },
  });
  // Emitted on every failed attempt while reconnecting: the outage is logged once.
  client.on('error', (err: Error) => outage.failed(err));
  client.on('ready', () => outage.ok());
  const connected = client.connect().then(
    () => undefined,
    () => undefined, // only when closed while still connecting
  );
  const ready = Promise.race([connected, new Promise<void>((r) => setTimeout(r, CONNECT_TIMEOUT_MS).unref())]);
  const send = (...args: string[]) => client.sendCommand<RedisReply>(args);
  return {
    store: (prefix) => new RedisCountStore({ sendCommand: send, prefix }, outage),
    ready,
    // Requests have drained by then; a reconnect under way stops at once (waiting for it would
    // take up to its 2 s back-off).
    close() {
      client.destroy();
      return Promise.resolve();
    },
  };
}

/**
 * rate-limit-redis's store, which loads its scripts once, in init: when Redis was away then, the
 * failed load would be kept and every count fail until a restart. Here a failed load is tried
 * again by the next request. Counts report to the outage, and a Redis that stopped answering
 * is not asked again for a few seconds, so that requests do not each wait the full timeout.
 */
class RedisCountStore extends RedisStore {
  private skipUntil = 0;
  constructor(
    options: ConstructorParameters<typeof RedisStore>[0],
    private readonly outage: Outage,
  ) {
    super(options);
  }

  override init(options: Options): Promise<void> {
    this.windowMs = options.windowMs;
    this.incrementScriptSha = quiet(this.loadIncrementScript());
    this.getScriptSha = quiet(this.loadGetScript());
    return Promise.resolve();
  }

  override async increment(key: string): Promise<IncrementResponse> {
    if (Date.now() < this.skipUntil) throw new Error('Redis did not answer a moment ago');
    try {
      // node-redis times a command out only while it waits to be written (commandOptions.timeout):
      // one already written to a Redis that then stopped answering (a stopped process, a lost
      // host) waits for ever, and so would the request. Its late answer, or failure, is dropped.
      const counted = await within(
        this.countOnce(key),
        COUNT_TIMEOUT_MS,
        () => new TimeoutError(`no answer from Redis in ${COUNT_TIMEOUT_MS} ms`),
      );
      this.outage.ok();
      return counted;
    } catch (err) {
      if (err instanceof TimeoutError) this.skipUntil = Date.now() + SKIP_AFTER_TIMEOUT_MS;
      this.outage.failed(err);
      throw err;
    }
  }

  private async countOnce(key: string): Promise<IncrementResponse> {
    await this.incrementScriptSha.catch(() => (this.incrementScriptSha = quiet(this.loadIncrementScript())));
    return super.increment(key);
  }

  override async get(key: string) {
    await this.getScriptSha.catch(() => (this.getScriptSha = quiet(this.loadGetScript())));
    return super.get(key);
  }
}

/** A promise whose rejection is handled later (or never), without an unhandled-rejection report. */
function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}
