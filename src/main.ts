import { createServer, type Server } from 'node:http';
import { createApp } from './app';
import { ConfigError, loadConfig } from './config';
import { ensureMysqlDatabase, openDb } from './db/connection';
import { migrate } from './db/migrations';

/** Starts the service; every failure to start is one line on stderr and exit code 1. */
async function main(): Promise<void> {
  const config = loadConfig();
  const where = config.database.client === 'sqlite'
    ? `SQLite file ${config.database.filename}`
    : `MySQL ${config.database.host}:${config.database.port}/${config.database.database}`;
  await ensureMysqlDatabase(config.database).catch((err) => {
    throw new ConfigError(`cannot reach the database (${where}): ${(err as Error).message}`);
  });
  const db = openDb(config.database);
  await migrate(db).catch((err) => {
    throw new ConfigError(`cannot prepare the database (${where}): ${(err as Error).message}`);
  });
  const app = await createApp({ db, bodyLimit: config.bodyLimit, fallbackHost: `${config.host}:${config.port}` });
  // Not app.listen: express 5 hands a listen error to the callback, which would look like success.
  const server: Server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new ConfigError(err.code === 'EADDRINUSE' ? `port ${config.port} on ${config.host} is already in use` : err.message)),
    );
    server.listen(config.port, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  console.log(`records API listening on http://${config.host}:${port}/ (database: ${where})`);

  const stop = () => {
    server.close(() => void db.destroy().then(() => process.exit(0)));
    server.closeIdleConnections();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  const message = err instanceof ConfigError ? err.message : `unexpected error while starting: ${(err as Error)?.message ?? err}`;
  console.error(`records API failed to start: ${message}`);
  process.exit(1);
});
