// Which failed database work may simply be run again: a deadlock (also how Galera reports a
// conflict between nodes) or a node not ready (1047) took no effect. After a lost connection a
// write may have committed, so only reads are run again.

/** Tries in all, the first included; then the failure is answered 503 with Retry-After. */
export const MAX_TRIES = 5;

const ROLLED_BACK = new Set(['ER_LOCK_DEADLOCK', 'ER_UNKNOWN_COM_ERROR', 'SQLITE_BUSY']);
const CONNECTION_LOST = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CONNECTION_KILLED',
  'ER_SERVER_SHUTDOWN',
]);

export function isRetryable(err: unknown, readOnly: boolean): boolean {
  if (!err || typeof err !== 'object') return false;
  const { code, fatal, timeout } = err as { code?: string; fatal?: boolean; timeout?: unknown };
  // A statement past the query timeout whose cancelling failed too: knex then throws the cancel's
  // own error (a connection that could not be made, fatal), with the timeout. The request's time
  // is spent, and the server is likely hung: running it again on the next pooled connection
  // would wait the whole timeout again, and again.
  if (typeof timeout === 'number') return false;
  if (code && ROLLED_BACK.has(code)) return true;
  // A connection that was never made ran nothing, whatever the request was.
  if (code === 'ECONNREFUSED') return true;
  return readOnly && ((code !== undefined && CONNECTION_LOST.has(code)) || fatal === true);
}

/** A short, growing, jittered pause, so that conflicting writers do not collide again in step. */
export function retryDelay(attempt: number): Promise<void> {
  const ms = 10 * 2 ** attempt * (0.5 + Math.random());
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs `work`, again after a retryable failure, up to MAX_TRIES times in all. */
export async function retrying<T>(work: () => Promise<T>, readOnly = false): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= MAX_TRIES || !isRetryable(err, readOnly)) throw err;
      await retryDelay(attempt);
    }
  }
}
