import { migrateDatabase, misnumberedMigration } from './schema';
import { createApp } from './app';
import { runningBuilt, staleBuild } from './buildStamp';
import { inWorker, reportReady, reportStartFailure, superviseWorkers, workerId } from './cluster';
import { type Config, ConfigError, databaseWhere, loadConfig } from './config';
import { withQueryTimeout, ensureMysqlDatabase, openDb } from './db/connection';
import { createSearch, keepIndex, searchLimits } from './search';
import { listen } from './http/server';
import { createLogger, flushLogs, type Logger } from './logger';

/** Starts the service; every failure to start is one line on stderr and exit code 1. */
async function main(): Promise<void> {
  // Code that does not match the spec it serves, or migrations that cannot be told apart, are
  // refused before anything else (workers run what their primary checked).
  if (!inWorker) {
    const wrong = (runningBuilt ? staleBuild() : undefined) ?? misnumberedMigration();
    if (wrong) throw new ConfigError(wrong);
  }
  const config = loadConfig();
  const primary = !inWorker && config.workers > 1;
  // Every worker's line names it; the primary's own lines go straight to stdout, between the
  // workers' lines that it relays there.
  const logger = inWorker
    ? createLogger(config.logLevel).child({ worker: workerId })
    : createLogger(config.logLevel, primary ? process.stdout : undefined);
  const where = databaseWhere(config.database);
  const dbLog = { warn: (m: string) => logger.warn(m), error: (m: string) => logger.error(m) };
  // The primary migrates once, before any worker starts.
  if (!inWorker) {
    await ensureMysqlDatabase(config.database).catch((err) => {
      throw new ConfigError(`cannot reach the database (${where}): ${(err as Error).message}`);
    });
    await migrateDatabase(config.database, dbLog).catch((err) => {
      throw new ConfigError(`cannot prepare the database (${where}): ${(err as Error).message}`);
    });
  }
  if (!inWorker) stopWithNpm(logger);
  if (primary) {
    process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));
    return superviseWorkers({
      workers: config.workers,
      shutdownTimeoutMs: config.shutdownTimeoutMs,
      logger,
      onListening: (port) => logStart(logger, config, port, where),
      failStart,
    });
  }
  const db = withQueryTimeout(openDb(config.database, config.pool, dbLog), config.pool.queryTimeoutMs);
  // One per process: its limiter is shared by every request.
  const search = createSearch({ searchTurns: config.searchTurns, poolSize: config.pool.size });
  // Redis only counts for the rate limit; without one it is not connected to, nor its client
  // loaded (a few MB of heap that every process would carry).
  const redis =
    config.redis && (config.rateLimitPerMinute || config.tokenRateLimitPerMinute)
      ? (await import('./http/redisCounts')).connectRedisCounts(config.redis, logger)
      : undefined;
  await redis?.ready;
  const app = await createApp({
    db,
    search,
    bodyLimit: config.bodyLimit,
    fallbackHost: `${config.host}:${config.port}`,
    publicUrl: config.publicUrl,
    allowedHosts: config.allowedHosts,
    logger,
    apiTokens: config.apiTokens,
    corsOrigins: config.corsOrigins,
    rateLimitPerMinute: config.rateLimitPerMinute,
    rateLimitStore: config.rateLimitPerMinute ? redis?.store(config.rateLimitPrefix) : undefined,
    tokensFile: config.tokensFile?.file,
    jwt: config.jwt,
    tokenRateLimitPerMinute: config.tokenRateLimitPerMinute,
    tokenRateLimitStore: config.tokenRateLimitPerMinute ? redis?.store(`${config.rateLimitPrefix}token:`) : undefined,
    trustProxy: config.trustProxy,
  });
  const { port, drain } = await listen(app, config.port, config.host);
  // Started once the app is built: building it holds the event loop for seconds on a loaded
  // machine, and a connection being opened meanwhile saw its connect timeout fire first (a
  // spurious "connect ETIMEDOUT" from the indexer at every busy start).
  const indexer = keepIndex(db, {
    onError: (err) => logger.warn({ err }, 'the search indexer failed; pending records are scanned meanwhile'),
  });
  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, inFlight: drain.inFlight(), timeoutMs: config.shutdownTimeoutMs }, 'shutting down');
    // One budget for draining and closing the pool; past it, exit 1 whatever is left.
    let timedOut = false;
    setTimeout(() => {
      timedOut = true;
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown timed out');
      void flushLogs().then(() => process.exit(1));
    }, config.shutdownTimeoutMs).unref();
    const drained = await drain.shutdown(config.shutdownTimeoutMs);
    await indexer?.stop();
    await Promise.all([db.destroy(), redis?.close()]);
    // Done after the budget, while the timeout's exit 1 waits for its lines: that exit stands.
    if (timedOut) return;
    if (!drained) logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'requests were still running at the shutdown timeout');
    else logger.info('stopped');
    await flushLogs();
    process.exit(drained ? 0 : 1);
  };
  process.on('SIGTERM', (signal) => void stop(signal));
  process.on('SIGINT', (signal) => void stop(signal));
  // A worker whose primary is gone (killed) takes no more connections: it stops as on SIGTERM.
  if (inWorker) process.once('disconnect', () => void stop('SIGTERM'));
  // Ready only once a signal would stop it gracefully: a SIGTERM sent on seeing `listening`
  // must not find Node's default (exit by the signal, requests cut).
  if (inWorker) reportReady(port);
  else logStart(logger, config, port, where);
  void flushLogs();
}

const PARENT_CHECK_MS = 1000;

/**
 * Started by npm (`npm start`), the service ends with it. npm passes SIGTERM and SIGINT on only
 * in some versions, and a npm killed outright passes nothing: the service, its parent gone, would
 * run on unseen. It then stops as on SIGTERM. Started otherwise (nohup, systemd), it is left be.
 */
function stopWithNpm(logger: Logger): void {
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  const check = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(check);
    logger.warn({ parent }, 'the npm process that started the service has exited: stopping');
    process.kill(process.pid, 'SIGTERM');
  }, PARENT_CHECK_MS);
  check.unref();
}

/** What the service runs with; `listening` comes last, once it takes requests. */
function logStart(logger: Logger, config: Config, port: number, database: string): void {
  if (config.apiTokens.length || config.tokensFile || config.jwt) {
    logger.info(
      {
        apiTokens: config.apiTokens.length,
        ...(config.tokensFile && { tokensFile: config.tokensFile.path, namedTokens: config.tokensFile.file.tokens.length }),
        ...(config.jwt && { jwtIssuer: config.jwt.issuer, jwtAudience: config.jwt.audience }),
      },
      '/api/ requires a bearer token',
    );
  } else logger.warn('API_TOKENS, TOKENS_FILE and JWT_PUBLIC_KEY_FILE/JWT_JWKS_FILE are not set: /api/ is open to every client');
  if (config.tokenRateLimitPerMinute) logger.info({ perMinute: config.tokenRateLimitPerMinute }, 'rate limit per token');
  if (config.rateLimitPerMinute) {
    const counts = config.redis
      ? { counts: 'redis', redis: config.redis.where, prefix: config.rateLimitPrefix }
      : { counts: config.workers > 1 ? 'primary process' : 'process' };
    logger.info({ perMinute: config.rateLimitPerMinute, ...counts }, 'rate limit per client address');
  } else if (config.redis && !config.tokenRateLimitPerMinute)
    logger.warn('REDIS_URL is set but RATE_LIMIT_PER_MINUTE is not: Redis is not used');
  if (config.corsOrigins.length) logger.info({ origins: config.corsOrigins }, 'CORS allowed for these origins');
  const { concurrency } = searchLimits(config.searchTurns, config.pool.size);
  if (config.database.client === 'mysql' && concurrency < config.searchTurns) {
    logger.warn(
      { asked: config.searchTurns, searchTurns: concurrency, poolSize: config.pool.size },
      'DB_SEARCH_TURNS is capped at DB_POOL_SIZE - 1',
    );
  }
  logger.info(
    {
      url: `http://${config.host}:${port}/`,
      port,
      database,
      workers: config.workers,
      poolSize: config.pool.size,
      queryTimeoutMs: config.pool.queryTimeoutMs,
      ...(config.database.client === 'mysql' && { searchTurns: concurrency }),
    },
    'listening',
  );
}

function failStart(message: string): never {
  console.error(`records API failed to start: ${message}`);
  process.exit(1);
}

main().catch(async (err: unknown) => {
  const message = err instanceof ConfigError ? err.message : `unexpected error while starting: ${(err as Error)?.message ?? err}`;
  // A worker leaves the one line to the primary, which knows whether the others fail too.
  if (inWorker) {
    await reportStartFailure(message, err instanceof ConfigError);
    process.exit(1);
  }
  failStart(message);
});
