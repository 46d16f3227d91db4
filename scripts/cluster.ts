// `npm run cluster -- up|down|status`: a 3-node MariaDB Galera cluster of its own, on free
// loopback ports in a temporary folder, for trying the service on a cluster. `up` prints the
// DATABASE_URL to use as its last line; the nodes keep running until `down`.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { attachCluster, type ClusterState, missingBinaries, nodeStatus, saveState, startCluster } from './cluster/galera';

const ROOT = resolve(__dirname, '..');
/** One cluster per checkout: its state (folder, ports, process ids) is kept here between commands. */
const STATE_FILE = join(tmpdir(), `records-cluster-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.json`);
const DATABASE = 'records';
const USAGE = 'usage: npm run cluster -- up|down|status';

function readState(): ClusterState | undefined {
  if (!existsSync(STATE_FILE)) return undefined;
  return JSON.parse(readFileSync(STATE_FILE, 'utf8')) as ClusterState;
}

async function up(): Promise<void> {
  const existing = readState();
  if (existing) {
    const cluster = attachCluster(existing);
    if (cluster.nodes.some((n) => n.running())) {
      console.log(`a cluster is already up in ${existing.dir} (npm run cluster -- down stops it)`);
      console.log(cluster.url(DATABASE));
      return;
    }
    rmSync(existing.dir, { recursive: true, force: true });
  }
  const missing = missingBinaries();
  if (missing.length) throw new Error(`missing ${missing.join(', ')}: apt-get install mariadb-server galera-4 rsync`);
  console.log('starting 3 Galera nodes (the second and third copy the first by rsync)...');
  const started = Date.now();
  const cluster = await startCluster({ detached: true });
  saveState(STATE_FILE, cluster.state());
  for (const n of cluster.nodes) console.log(`node${n.index}: pid ${n.pid()}, port ${n.port}, galera ${n.galeraPort}`);
  console.log(
    `up in ${((Date.now() - started) / 1000).toFixed(1)} s, data in ${cluster.dir}; the service creates the database on first start`,
  );
  console.log(cluster.url(DATABASE));
}

async function down(): Promise<void> {
  const state = readState();
  if (!state) return void console.log('no cluster is up');
  await attachCluster(state).destroy();
  rmSync(STATE_FILE, { force: true });
  console.log(`stopped; removed ${state.dir}`);
}

async function status(): Promise<boolean> {
  const state = readState();
  if (!state) {
    console.log('no cluster is up');
    return false;
  }
  const cluster = attachCluster(state);
  let healthy = true;
  for (const n of cluster.nodes) {
    if (!n.running()) {
      healthy = false;
      console.log(`node${n.index}: port ${n.port}, not running`);
      continue;
    }
    try {
      const s = await nodeStatus(n.port);
      healthy &&= s.state === 'Synced' && s.clusterStatus === 'Primary';
      console.log(`node${n.index}: port ${n.port}, pid ${n.pid()}, ${s.state}, cluster ${s.clusterStatus} of ${s.clusterSize}`);
    } catch (err) {
      healthy = false;
      console.log(`node${n.index}: port ${n.port}, pid ${n.pid()}, does not answer (${(err as Error).message})`);
    }
  }
  console.log(cluster.url(DATABASE));
  return healthy;
}

async function main(): Promise<void> {
  const command = process.argv[2];
  if (command === 'up') return up();
  if (command === 'down') return down();
  if (command === 'status') {
    if (!(await status())) process.exitCode = 1;
    return;
  }
  console.error(USAGE);
  process.exitCode = 2;
}

main().catch((err) => {
  console.error((err as Error).message);
  process.exit(1);
});
