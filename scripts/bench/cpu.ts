// How busy the machine was with other work during a measurement: all CPU time the kernel
// counted, less that of the benchmark's own processes and of the database server. Other
// programs on the same cores slow both servers, so a number here says how far to trust a row.
// Linux only (/proc); elsewhere it reports nothing.
import { readdirSync, readFileSync } from 'node:fs';

export const TICKS_PER_SECOND = 100;

function busyTicks(): number | undefined {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .map(Number);
    return user + nice + system + irq + softirq + steal;
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) a process has used so far, in clock ticks (0 when unknown). */
export function processTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** The process and its descendants (a service's primary and its workers). */
export function processTree(pid: number): number[] {
  try {
    const children = readdirSync(`/proc/${pid}/task`).flatMap((t) =>
      readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    );
    return [pid, ...children.flatMap(processTree)];
  } catch {
    return [pid];
  }
}

/** CPU time of a process and its descendants that are alive now, in clock ticks. */
export function treeTicks(pid: number): number {
  return processTree(pid).reduce((n, p) => n + processTicks(p), 0);
}

/**
 * Resolves once a process tree has used under a tenth of a core for half a second (or after
 * `timeoutMs`): a load generator that stopped leaves the service a backlog of requests, which
 * would otherwise run beside the next measurement.
 */
export async function whenIdle(pid: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = treeTicks(pid);
  let calm = 0;
  const windowMs = 250;
  const idleTicks = (TICKS_PER_SECOND * windowMs) / 1000 / 10; // a tenth of a core
  while (calm < 2 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, windowMs));
    const now = treeTicks(pid);
    calm = now - last < idleTicks ? calm + 1 : 0;
    last = now;
  }
}

function databasePids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number)
      .filter((pid) => {
        try {
          return /^(mariadbd|mysqld)$/.test(readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
        } catch {
          return false;
        }
      });
  } catch {
    return [];
  }
}

/** Where a measurement's CPU went: per response, ms, and other programs' cores. */
export interface CpuSplit {
  /** The server process and its workers. */
  serverMs: number;
  /** The database server (mariadbd/mysqld on this machine). */
  databaseMs: number;
  /** The benchmark's own process: the load generator. */
  loadGeneratorMs: number;
  /** Everything the kernel counted on all cores, the above included. */
  machineMs: number;
  /** Cores (on average) kept busy by programs other than the above. */
  foreignCores: number;
}

/**
 * Starts counting the machine's CPU time and that of the server, the database and this process;
 * the returned function splits what was spent per response since, or undefined off Linux.
 * The split tells whether the machine itself was the limit: at `machineMs` a response, all
 * cores together serve at most cores × 1000 ÷ machineMs responses a second.
 */
export function cpuSplit(serverPid: number): (responses: number) => CpuSplit | undefined {
  const databases = databasePids();
  const server = () => treeTicks(serverPid);
  const database = () => databases.reduce((n, pid) => n + processTicks(pid), 0);
  const own = () => processTicks(process.pid);
  const started = Date.now();
  const before = { machine: busyTicks(), server: server(), database: database(), own: own() };
  return (responses) => {
    const machine = busyTicks();
    if (before.machine === undefined || machine === undefined || responses === 0) return undefined;
    const seconds = (Date.now() - started) / 1000;
    const spent = {
      machine: machine - before.machine,
      server: server() - before.server,
      database: database() - before.database,
      own: own() - before.own,
    };
    const perResponse = (ticks: number) => (ticks * (1000 / TICKS_PER_SECOND)) / responses;
    return {
      serverMs: perResponse(spent.server),
      databaseMs: perResponse(spent.database),
      loadGeneratorMs: perResponse(spent.own),
      machineMs: perResponse(spent.machine),
      foreignCores: Math.max(0, spent.machine - spent.server - spent.database - spent.own) / TICKS_PER_SECOND / seconds,
    };
  };
}
