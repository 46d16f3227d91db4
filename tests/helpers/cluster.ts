import { migrateDatabase } from '../../src/schema';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startCluster, missingBinaries, type GaleraCluster } from '../../scripts/cluster/galera';
import { createApp } from '../../src/app';
import { parseDatabaseUrl } from '../../src/config';
import { ensureMysqlDatabase, openDb, type Db } from '../../src/db/connection';
import { requester, type Requester } from './app';
import { dialect } from './db';

/**
 * `describe` for tests that need a Galera cluster of their own: they run with TEST_DB=mysql;
 * where the binaries are missing they are skipped with a message, except under CI, which
 * installs them (.ci/run) and so must fail instead.
 */
export function describeCluster(name: string, body: () => void): void {
  if (dialect !== 'mysql') return describe.skip(name, body);
  const missing = missingBinaries();
  if (missing.length && !process.env.CI) {
    console.warn(
      `${name}: skipped, Galera is not installed (missing ${missing.join(', ')}; apt-get install galera-4 mariadb-server rsync)`,
    );
    return describe.skip(name, body);
  }
  describe(name, body);
}

export { startCluster, type GaleraCluster };

/** The service in this process, on one node (or on several hosts), listening on a free port. */
export interface ClusterApp {
  url: string;
  db: Db;
  request: Requester;
  close(): Promise<void>;
}

export async function startClusterApp(databaseUrl: string): Promise<ClusterApp> {
  const config = parseDatabaseUrl(databaseUrl);
  const db = openDb(config);
  const app = await createApp({ db, bodyLimit: 1024 * 1024, fallbackHost: 'localhost' });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    db,
    request: requester(url),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.destroy();
    },
  };
}

/** Creates and migrates `database` on the cluster (several instances at once, as at a rollout). */
export async function prepareClusterDatabase(cluster: GaleraCluster, database: string): Promise<void> {
  // Each node is asked: another node may apply the replicated CREATE DATABASE only later, and a
  // migration connecting to it first would meet "Unknown database" under load.
  for (const n of cluster.nodes) await ensureMysqlDatabase(parseDatabaseUrl(cluster.nodeUrl(n.index, database)));
  await Promise.all(cluster.nodes.map((n) => migrateDatabase(parseDatabaseUrl(cluster.nodeUrl(n.index, database)))));
}

/** One pool per node, for checking what each node holds. */
export function nodeDbs(cluster: GaleraCluster, database: string): Db[] {
  return cluster.nodes.map((n) => openDb(parseDatabaseUrl(cluster.nodeUrl(n.index, database))));
}
