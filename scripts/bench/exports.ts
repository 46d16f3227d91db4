// `npx tsx scripts/bench/exports.ts [--collection posts] [--rows N]` with DATABASE_URL naming a
// filled database (`npm run build` first): the built service (`node dist/main.js`, one process)
// streams the whole collection as NDJSON, then as CSV, to curl (into /dev/null), while this
// samples the service's resident memory every 200 ms; then a client that leaves after 2 s shows
// whether the walk stops (the service's CPU time in the 3 s after). Figures for BENCHMARKS.md.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { processTicks, TICKS_PER_SECOND } from './cpu';
import { startServer } from './servers';

const MB = 1024 * 1024;
const SAMPLE_MS = 200;

/** VmRSS and VmHWM (peak since start, or since the last reset) of a process, in bytes. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Resets VmHWM so that each export's peak is its own (Linux: 5 into clear_refs). */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** curl's download into /dev/null: bytes and seconds, as curl counts them. */
function curl(url: string, accept: string, maxSeconds?: number): Promise<{ bytes: number; seconds: number; code: number | null }> {
  const args = ['-s', '-o', '/dev/null', '-H', `Accept: ${accept}`, '-w', '%{size_download} %{time_total}'];
  if (maxSeconds) args.push('--max-time', String(maxSeconds));
  const child = spawn('curl', [...args, url], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      const [bytes, seconds] = out.trim().split(' ').map(Number);
      resolve({ bytes, seconds, code });
    }),
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      collection: { type: 'string', default: 'posts' },
      rows: { type: 'string' },
      'node-option': { type: 'string', multiple: true },
    },
  });
  if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL must name the database to export from');
  const server = await startServer('service', 'built', { DATABASE_URL: process.env.DATABASE_URL }, values['node-option'] ?? []);
  const url = `${server.url}/api/${values.collection}/export/`;
  try {
    await new Promise((r) => setTimeout(r, 3000));
    const idle = memory(server.pid);
    console.log(
      `service pid ${server.pid} (node ${(values['node-option'] ?? []).join(' ')} dist/main.js); idle RSS ${(idle.rss / MB).toFixed(1)} MB; load ${load()}`,
    );
    const rows = values.rows ? Number(values.rows) : undefined;
    for (const [format, accept] of [
      ['ndjson', 'application/x-ndjson'],
      ['csv', 'text/csv'],
    ] as const) {
      resetPeak(server.pid);
      const before = load();
      let sampled = 0;
      const timer = setInterval(() => (sampled = Math.max(sampled, memory(server.pid).rss)), SAMPLE_MS);
      const ticks = processTicks(server.pid);
      const got = await curl(url, accept);
      clearInterval(timer);
      const cpu = (processTicks(server.pid) - ticks) / TICKS_PER_SECOND;
      const { peak, rss } = memory(server.pid);
      console.log(
        [
          `${format}: ${(got.bytes / MB).toFixed(0)} MB in ${got.seconds.toFixed(1)} s (${(got.bytes / MB / got.seconds).toFixed(1)} MB/s`,
          rows ? `, ${Math.round(rows / got.seconds).toLocaleString('en')} rows/s)` : ')',
          `; peak RSS ${(peak / MB).toFixed(1)} MB (sampled max ${(sampled / MB).toFixed(1)}), after ${(rss / MB).toFixed(1)} MB`,
          `; service CPU ${cpu.toFixed(1)} s; load ${before} -> ${load()}`,
        ].join(''),
      );
    }
    // A client that goes away mid-export: the walk must stop, so the service goes quiet.
    const early = await curl(url, 'application/x-ndjson', 2);
    const ticks = processTicks(server.pid);
    await new Promise((r) => setTimeout(r, 3000));
    const after = (processTicks(server.pid) - ticks) / TICKS_PER_SECOND;
    console.log(
      `disconnect: the client left after ${early.seconds.toFixed(1)} s (${(early.bytes / MB).toFixed(0)} MB read); ` +
        `service CPU in the next 3 s: ${after.toFixed(2)} s; RSS ${(memory(server.pid).rss / MB).toFixed(1)} MB; load ${load()}`,
    );
  } finally {
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
