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

/** Starts counting; the returned function gives the cores (on average) used by other programs. */
export function foreignCpu(ownPids: number[]): () => number | undefined {
  const pids = [...ownPids.flatMap(processTree), ...databasePids()];
  const started = Date.now();
  const total = busyTicks();
  const own = pids.reduce((n, pid) => n + processTicks(pid), 0);
  return () => {
    const totalNow = busyTicks();
    if (total === undefined || totalNow === undefined) return undefined;
    const ownNow = pids.reduce((n, pid) => n + processTicks(pid), 0);
    const seconds = (Date.now() - started) / 1000;
    return Math.max(0, totalNow - total - (ownNow - own)) / TICKS_PER_SECOND / seconds;
  };
}
