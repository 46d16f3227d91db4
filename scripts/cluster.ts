// `npm run cluster -- up|down|status`: a 3-node MariaDB Galera cluster of its own, on free
// loopback ports in a temporary folder, for trying the service on a cluster. `up` prints the
// DATABASE_URL to use as its last line; the nodes keep running until `down`.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  attachCluster,
  type ClusterState,
  type GaleraCluster,
  missingBinaries,
  nodeStatus,
  planUp,
  rejoinable,
  saveState,
  startCluster,
} from './cluster/galera';

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
    const plan = planUp(cluster.nodes.map((n) => n.running()));
    if (plan.action === 'none') {
      console.log(`a cluster is already up in ${existing.dir} (npm run cluster -- down stops it)`);
      console.log(cluster.url(DATABASE));
      return;
    }
    if (plan.action === 'rejoin') return rejoin(cluster, plan.down, plan.up);
    console.log(`no node of the cluster in ${existing.dir} is running: removing it and starting a new one`);
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

const names = (nodes: number[]) => nodes.map((i) => `node${i}`).join(', ');
const AFRESH = 'npm run cluster -- down, then up, starts a new cluster (its data is lost)';

/** Starts the nodes that are down, one at a time, to rejoin those that run. */
async function rejoin(cluster: GaleraCluster, down: number[], up: number[]): Promise<void> {
  const [one, verb] = down.length === 1 ? ['it', 'is'] : ['them', 'are'];
  console.log(`the cluster in ${cluster.dir} is partly up: ${names(down)} ${verb} not running; starting ${one} to rejoin ${names(up)}...`);
  // A node joins a primary component; nodes left without one (a majority lost) take no joiner.
  const answers = await Promise.all(
    up.map(async (node) => ({ node, status: await nodeStatus(cluster.nodes[node].port).catch((err: Error) => err) })),
  );
  const verdict = rejoinable(answers);
  const is = up.length === 1 ? 'is' : 'are';
  if (!verdict.ok && verdict.reason === 'no answer')
    throw new Error(
      `${names(up)} ${is} running but ${up.length === 1 ? 'does' : 'do'} not answer (${verdict.detail}): a node may be hung or still starting; try again, or ${AFRESH}`,
    );
  if (!verdict.ok)
    throw new Error(
      `${names(up)} ${is} left without a primary component (${verdict.detail}; most nodes stopped at once): there is nothing to rejoin; ${AFRESH}`,
    );
  const started = Date.now();
  for (const index of down) {
    const node = cluster.nodes[index];
    try {
      await node.start();
    } catch (err) {
      throw new Error(`node${index} did not rejoin: ${(err as Error).message}\n${AFRESH}`, { cause: err });
    } finally {
      saveState(STATE_FILE, cluster.state());
    }
    console.log(`node${index}: pid ${node.pid()}, port ${node.port}, galera ${node.galeraPort}`);
  }
  console.log(`up again in ${((Date.now() - started) / 1000).toFixed(1)} s`);
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
