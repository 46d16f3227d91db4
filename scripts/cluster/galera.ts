// A MariaDB Galera cluster of its own on loopback ports in a temporary folder: for `npm run
// cluster` and for the cluster tests. Binaries from Debian's packages (mariadb-server, galera-4,
// rsync for state transfers). Memory is kept small: every node shares the machine.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { accepts, freePort } from '../lib/ports';

export const MARIADBD = '/usr/sbin/mariadbd';
export const INSTALL_DB = '/usr/bin/mariadb-install-db';
export const GALERA = '/usr/lib/galera/libgalera_smm.so';
const RSYNC = '/usr/bin/rsync';

/** The binaries that a cluster needs; empty when all are present. */
export function missingBinaries(): string[] {
  return [MARIADBD, INSTALL_DB, GALERA, RSYNC].filter((f) => !existsSync(f));
}

export interface NodeInfo {
  /** 0-based. */
  index: number;
  port: number;
  galeraPort: number;
  istPort: number;
  sstPort: number;
  datadir: string;
}

export interface ClusterState {
  dir: string;
  nodes: (NodeInfo & { pid?: number })[];
}

export interface GaleraNode extends NodeInfo {
  pid(): number | undefined;
  running(): boolean;
  /** kill -9 (a crash) or SIGTERM (a clean stop); waits for the process to end. */
  stop(signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** Starts the node again, joining the others, and waits until it is synced. */
  start(): Promise<void>;
}

export interface GaleraCluster {
  dir: string;
  nodes: GaleraNode[];
  /** mysql://root@127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3/<database> */
  url(database: string): string;
  /** URL of one node only. */
  nodeUrl(index: number, database: string): string;
  state(): ClusterState;
  /** Stops every node (SIGTERM, SIGKILL after a while) and deletes the folder. */
  destroy(): Promise<void>;
}

export interface ClusterOptions {
  size?: number;
  /** Processes outlive this one (npm run cluster up); their output goes to files in the folder. */
  detached?: boolean;
  /** false: plain servers with the same settings and no replication (the benchmark's "one server"). */
  galera?: boolean;
}

function nodeArgs(dir: string, node: NodeInfo, all: NodeInfo[], bootstrap: boolean, galera = true): string[] {
  return [
    '--no-defaults',
    `--datadir=${node.datadir}`,
    `--port=${node.port}`,
    `--socket=${join(dir, `node${node.index}.sock`)}`,
    `--pid-file=${join(dir, `node${node.index}.pid`)}`,
    '--bind-address=127.0.0.1',
    '--skip-networking=0',
    '--user=root',
    '--innodb-buffer-pool-size=32M',
    '--innodb-log-file-size=16M',
    // Test clusters only: a commit is flushed to disk once a second; on a cluster the other
    // nodes hold it (a crashed node catches up from them), which is what the fault test checks.
    '--innodb-flush-log-at-trx-commit=2',
    '--performance-schema=OFF',
    '--max-connections=300',
    '--skip-name-resolve',
    '--binlog-format=ROW',
    '--default-storage-engine=InnoDB',
    '--innodb-autoinc-lock-mode=2',
    ...(galera ? galeraArgs(node, all, bootstrap) : []),
    '--log-error=' + join(dir, `node${node.index}.err`),
  ];
}

function galeraArgs(node: NodeInfo, all: NodeInfo[], bootstrap: boolean): string[] {
  const peers = all.map((n) => `127.0.0.1:${n.galeraPort}`).join(',');
  const provider = [
    `base_host=127.0.0.1`,
    `base_port=${node.galeraPort}`,
    `gmcast.listen_addr=tcp://127.0.0.1:${node.galeraPort}`,
    `ist.recv_addr=127.0.0.1:${node.istPort}`,
    // Small write-set cache: enough for a restarted node to catch up by IST after a short outage.
    'gcache.size=32M',
    'gcache.page_size=16M',
    // Notice a killed peer within a few seconds instead of the default 5-15 s.
    'evs.suspect_timeout=PT3S',
    'evs.inactive_timeout=PT6S',
    'evs.keepalive_period=PT0.5S',
    'evs.inactive_check_period=PT0.5S',
  ].join(';');
  return [
    '--wsrep-on=ON',
    `--wsrep-provider=${GALERA}`,
    `--wsrep-provider-options=${provider}`,
    `--wsrep-cluster-address=gcomm://${bootstrap ? '' : peers}`,
    '--wsrep-cluster-name=records',
    `--wsrep-node-name=node${node.index}`,
    `--wsrep-node-address=127.0.0.1:${node.galeraPort}`,
    `--wsrep-node-incoming-address=127.0.0.1:${node.port}`,
    '--wsrep-sst-method=rsync',
    `--wsrep-sst-receive-address=127.0.0.1:${node.sstPort}`,
    '--wsrep-slave-threads=2',
  ];
}

/**
 * Tries at starting a cluster. Its ports were free when chosen, but the system may hand one out
 * again (as an outgoing connection's port) before a node binds it: seen in CI as a joiner whose
 * state-transfer listener found its port in use, and died.
 */
const START_TRIES = 3;

export async function startCluster(options: ClusterOptions = {}): Promise<GaleraCluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startClusterOnce(options);
    } catch (err) {
      if (attempt >= START_TRIES || !/Address already in use/.test((err as Error)?.message ?? '')) throw err;
    }
  }
}

async function startClusterOnce(options: ClusterOptions): Promise<GaleraCluster> {
  const missing = missingBinaries();
  if (missing.length) throw new Error(`missing ${missing.join(', ')} (apt-get install mariadb-server galera-4 rsync)`);
  const size = options.size ?? 3;
  const dir = mkdtempSync(join(tmpdir(), 'records-galera-'));
  chmodSync(dir, 0o755);
  const infos: NodeInfo[] = [];
  const taken = new Set<number>();
  for (let index = 0; index < size; index++) {
    const [port, galeraPort, istPort, sstPort] = [
      await freePort(taken),
      await freePort(taken),
      await freePort(taken),
      await freePort(taken),
    ];
    infos.push({ index, port, galeraPort, istPort, sstPort, datadir: join(dir, `node${index}`) });
    mkdirSync(infos[index].datadir, { recursive: true });
    // Debian's rsync state transfer runs its rsync daemon as root's default uid, `nobody`,
    // which must reach and write a joiner's empty data folder.
    chmodSync(infos[index].datadir, 0o777);
  }
  // Only the first node needs system tables: the others receive its data by state transfer.
  await promisify(execFile)(INSTALL_DB, [
    '--no-defaults',
    `--datadir=${infos[0].datadir}`,
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--user=root',
  ]);
  const children = new Map<number, ChildProcess>();
  const cluster = buildCluster(dir, infos, children, options.detached ?? false, [], options.galera ?? true);
  try {
    await cluster.nodes[0].start();
    // One joiner at a time: each asks a donor for a full copy.
    for (const node of cluster.nodes.slice(1)) await node.start();
  } catch (err) {
    if (!process.env.RECORDS_CLUSTER_KEEP) await cluster.destroy();
    throw err;
  }
  return cluster;
}

function buildCluster(
  dir: string,
  infos: NodeInfo[],
  children: Map<number, ChildProcess>,
  detached: boolean,
  pids: (number | undefined)[] = [],
  galera = true,
): GaleraCluster {
  // A cluster attached from saved state is running: any start joins it.
  let started = pids.length > 0;
  /** Nodes that have run before: their data folder holds a state to recover. */
  const ran = new Set<number>(pids.length > 0 ? infos.map((i) => i.index) : []);
  const nodes: GaleraNode[] = infos.map((info) => {
    const pid = () => children.get(info.index)?.pid ?? pids[info.index];
    const running = () => {
      const child = children.get(info.index);
      if (child) return child.exitCode === null && child.signalCode === null;
      const p = pids[info.index];
      return p !== undefined && alive(p);
    };
    return {
      ...info,
      pid,
      running,
      async stop(signal = 'SIGKILL') {
        const p = pid();
        if (p === undefined || !running()) return;
        process.kill(p, signal);
        const deadline = Date.now() + 60000;
        while (running()) {
          if (Date.now() > deadline) process.kill(p, 'SIGKILL');
          await sleep(50);
        }
        children.delete(info.index);
        pids[info.index] = undefined;
      },
      async start() {
        // The first start of node 0 founds the cluster; any later start joins the running nodes.
        const bootstrap = !started && info.index === 0;
        const args = nodeArgs(dir, info, infos, bootstrap, galera);
        if (ran.has(info.index) && galera) {
          // A state transfer may rewrite any file (see the chmod at creation).
          await promisify(execFile)('chmod', ['-R', 'a+rwX', info.datadir]);
          // After a crash the node no longer knows its position; mysqld_safe would recover it so
          // that the node catches up from a peer's write-set cache (IST) instead of a full copy.
          const position = await recoverPosition(args);
          if (position) args.push(`--wsrep-start-position=${position}`);
        }
        const out = detached ? openSync(join(dir, `node${info.index}.out`), 'a') : 'ignore';
        const child = spawn(MARIADBD, args, { stdio: ['ignore', out, out], detached });
        if (detached) child.unref();
        children.set(info.index, child);
        ran.add(info.index);
        await waitSynced(info, running, join(dir, `node${info.index}.err`), galera);
        started = true;
      },
    };
  });
  const cluster: GaleraCluster = {
    dir,
    nodes,
    url: (database) => `mysql://root@${infos.map((n) => `127.0.0.1:${n.port}`).join(',')}/${database}`,
    nodeUrl: (index, database) => `mysql://root@127.0.0.1:${infos[index].port}/${database}`,
    state: () => ({ dir, nodes: nodes.map((n) => ({ ...infos[n.index], pid: n.running() ? n.pid() : undefined })) }),
    async destroy() {
      // Stopped all at once, so that none waits for the others as a donor or a peer.
      await Promise.all(nodes.map((n) => n.stop('SIGTERM')));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return cluster;
}

/** A cluster started earlier (by `npm run cluster up`), from its saved state. */
export function attachCluster(state: ClusterState): GaleraCluster {
  const cluster = buildCluster(
    state.dir,
    state.nodes,
    new Map(),
    true,
    state.nodes.map((n) => n.pid),
  );
  return cluster;
}

/**
 * What `npm run cluster -- up` does with a cluster it started before, from which of its nodes
 * run: nothing when all do; when only some do, start the others, which rejoin them (a node
 * stopped, or killed); when none does, there is nothing to join, and a new cluster is started.
 */
export type UpPlan = { action: 'none' } | { action: 'rejoin'; down: number[]; up: number[] } | { action: 'new' };

export function planUp(running: readonly boolean[]): UpPlan {
  const down = running.flatMap((r, i) => (r ? [] : [i]));
  if (down.length === 0) return { action: 'none' };
  if (down.length === running.length) return { action: 'new' };
  return { action: 'rejoin', down, up: running.flatMap((r, i) => (r ? [i] : [])) };
}

/**
 * Whether the running nodes can take the stopped ones back, from what each of them answered
 * (its status, or the error of asking): one in a primary component is enough. Else why not: none
 * answers at all (hung, or still starting), or those that answer are left without a primary
 * component (most nodes stopped at once), and nothing can join them.
 */
export function rejoinable(
  answers: readonly { node: number; status: NodeStatus | Error }[],
): { ok: true } | { ok: false; reason: 'no answer' | 'no primary'; detail: string } {
  if (answers.some((a) => !(a.status instanceof Error) && a.status.clusterStatus === 'Primary')) return { ok: true };
  const answered = answers.filter((a) => !(a.status instanceof Error));
  if (!answered.length)
    return { ok: false, reason: 'no answer', detail: answers.map((a) => `node${a.node}: ${(a.status as Error).message}`).join('; ') };
  return {
    ok: false,
    reason: 'no primary',
    detail: answered.map((a) => `node${a.node}: ${(a.status as NodeStatus).clusterStatus}`).join('; '),
  };
}

/** The node's last committed position (uuid:seqno) from its InnoDB logs, as mysqld_safe finds it. */
async function recoverPosition(args: string[]): Promise<string | undefined> {
  const log = args.find((a) => a.startsWith('--log-error='))!.slice('--log-error='.length) + '.recover';
  const recoverArgs = args.filter((a) => !a.startsWith('--log-error=')).concat(`--log-error=${log}`, '--wsrep-recover');
  await promisify(execFile)(MARIADBD, recoverArgs).catch(() => {});
  const m = /WSREP: Recovered position:\s*(\S+:-?\d+)/.exec(tail(log, 1000));
  return m && !m[1].endsWith(':-1') ? m[1] : undefined;
}

/** Waits until the node accepts connections and reports itself Synced with the cluster. */
async function waitSynced(node: NodeInfo, running: () => boolean, errorLog: string, galera = true): Promise<void> {
  const deadline = Date.now() + 120000;
  let last = '';
  for (;;) {
    if (!running()) throw new Error(`node${node.index} exited while starting:\n${tail(errorLog)}`);
    if (Date.now() > deadline) throw new Error(`node${node.index} did not sync within 120 s (${last}):\n${tail(errorLog)}`);
    if (await accepts(node.port)) {
      if (!galera) return;
      try {
        const status = await nodeStatus(node.port);
        last = status.state;
        if (status.state === 'Synced' && status.ready) return;
      } catch (err) {
        last = (err as Error).message;
      }
    }
    await sleep(200);
  }
}

export interface NodeStatus {
  state: string;
  ready: boolean;
  clusterSize: number;
  clusterStatus: string;
}

export async function nodeStatus(port: number): Promise<NodeStatus> {
  const conn = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 2000 });
  try {
    const [rows] = await conn.query(
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_local_state_comment', 'wsrep_ready', 'wsrep_cluster_size', 'wsrep_cluster_status')",
    );
    const v = Object.fromEntries((rows as { Variable_name: string; Value: string }[]).map((r) => [r.Variable_name, r.Value]));
    return {
      state: v.wsrep_local_state_comment ?? 'unknown',
      ready: v.wsrep_ready === 'ON',
      clusterSize: Number(v.wsrep_cluster_size ?? 0),
      clusterStatus: v.wsrep_cluster_status ?? 'unknown',
    };
  } finally {
    await conn.end();
  }
}

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no error log)';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function saveState(file: string, state: ClusterState): void {
  writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`);
}
