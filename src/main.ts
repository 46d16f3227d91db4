import { createApp } from './app';
import { type Config, ConfigError, loadConfig } from './config';
import { applyQueryTimeout, ensureMysqlDatabase, openDb } from './db/connection';
import { migrateDatabase } from './db/migrations';
import { drainable, listen } from './http/server';
import { createLogger, flushLogs, type Logger } from './logger';

/** Starts the service; every failure to start is one line on stderr and exit code 1. */
async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const where = config.database.client === 'sqlite'
    ? `SQLite file ${config.database.filename}`
    : `MySQL ${config.database.host}:${config.database.port}/${config.database.database}`;
  await ensureMysqlDatabase(config.database).catch((err) => {
    throw new ConfigError(`cannot reach the database (${where}): ${(err as Error).message}`);
  });
  const dbLog = { warn: (m: string) => logger.warn(m), error: (m: string) => logger.error(m) };
  await migrateDatabase(config.database, dbLog).catch((err) => {
    throw new ConfigError(`cannot prepare the database (${where}): ${(err as Error).message}`);
  });
  const db = openDb(config.database, config.pool, dbLog);
  applyQueryTimeout(db, config.pool.queryTimeoutMs);
  const app = await createApp({
    db,
    bodyLimit: config.bodyLimit,
    fallbackHost: `${config.host}:${config.port}`,
    logger,
    apiTokens: config.apiTokens,
    corsOrigins: config.corsOrigins,
    rateLimitPerMinute: config.rateLimitPerMinute,
    trustProxy: config.trustProxy,
  });
  const { server, port } = await listen(app, config.port, config.host);
  const drain = drainable(server);
  logStart(logger, config, port, where);
  flushLogs();

  process.on('unhandledRejection', (err) => logger.error({ err }, 'unhandled rejection'));
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, inFlight: drain.inFlight(), timeoutMs: config.shutdownTimeoutMs }, 'shutting down');
    // One budget for draining and closing the pool; past it, exit 1 whatever is left.
    setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'shutdown timed out');
      flushLogs();
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
    const drained = await drain.shutdown(config.shutdownTimeoutMs);
    await db.destroy();
    if (!drained) logger.error({ timeoutMs: config.shutdownTimeoutMs }, 'requests were still running at the shutdown timeout');
    else logger.info('stopped');
    flushLogs();
    process.exit(drained ? 0 : 1);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

/** What the service runs with; `listening` comes last, once it takes requests. */
function logStart(logger: Logger, config: Config, port: number, database: string): void {
  if (config.apiTokens.length) logger.info({ tokens: config.apiTokens.length }, '/api/ requires a bearer token (API_TOKENS)');
  else logger.warn('API_TOKENS is not set: /api/ is open to every client');
  if (config.rateLimitPerMinute) logger.info({ perMinute: config.rateLimitPerMinute }, 'rate limit per client address');
  if (config.corsOrigins.length) logger.info({ origins: config.corsOrigins }, 'CORS allowed for these origins');
  logger.info({ url: `http://${config.host}:${port}/`, port, database, poolSize: config.pool.size, queryTimeoutMs: config.pool.queryTimeoutMs }, 'listening');
}

main().catch((err: unknown) => {
  const message = err instanceof ConfigError ? err.message : `unexpected error while starting: ${(err as Error)?.message ?? err}`;
  console.error(`records API failed to start: ${message}`);
  process.exit(1);
});
