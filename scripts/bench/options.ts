// Benchmark parameters: flags first, then BENCH_* environment variables, then defaults.
import { parseArgs } from 'node:util';

export interface BenchOptions {
  /** Posts in the database the scenarios run on. */
  rows: number;
  /** Seconds measured per scenario and target, after `warmup` seconds not measured. */
  duration: number;
  warmup: number;
  connections: number;
  /** Server URL and base name; each row count gets its own database, `<name>_<rows>`. */
  databaseUrl: string;
  /** Where the report goes (between its markers, keeping the rest of the file). */
  out: string;
  /** Row counts for the list page 1 scale comparison; empty to skip it. */
  scale: number[];
  /** Run only these scenarios (all when empty). */
  only: string[];
  /** Write a V8 CPU profile of the service per database to this folder. */
  profileDir?: string;
  /** WEB_CONCURRENCY of each service measured; the first is compared with the baseline in the main table. */
  workers: number[];
  smoke: boolean;
  /** Compare a 3-node Galera cluster of its own with one server (get and create only). */
  cluster: boolean;
  /** The search scenarios over the realistic corpus (`searchSuite.ts`), on MySQL or SQLite. */
  search: boolean;
  /** With `search`: import the corpus into an empty database even when it is there already. */
  reimport: boolean;
  /** A steady mixed load for `duration` seconds, watching memory, descriptors and errors (soak.ts). */
  soak: boolean;
  /** With `soak`: requests a second, all connections together. */
  rate: number;
  /** Bulk against single creates, and get by id with and without a scoped token (auth.ts). */
  auth: boolean;
}

export const USAGE = `usage: npm run bench -- [--smoke] [--rows N] [--duration S] [--warmup S] [--connections N]
    [--database-url mysql://user@host:port/base] [--out FILE] [--scale N,N | --scale none]
    [--only get,list,deep,search,create,patch] [--profile DIR] [--workers 1,2] [--cluster]
    [--search [--reimport]] [--soak [--rate N]] [--auth]
  --smoke: seconds, not minutes (2,000 rows, 1 s a scenario; report in build/bench-smoke.md).
  --search: search scenarios over the realistic corpus, one client against the scan and over HTTP
    (1,000,000 posts unless --rows; MySQL, or SQLite with --database-url sqlite:FILE); the corpus
    is imported with npm run import (timed) when missing, or always with --reimport.
  --soak: a mixed load (reads, searches, writes, exports, bad requests) at --rate requests/s
    (default 100) over --connections (default 8) for --duration seconds (default 600; 5 with
    --smoke) on MySQL or SQLite (--database-url sqlite:FILE), with --rows posts (default 20,000;
    500 with --smoke); reports the service's RSS, heap and descriptors at start, middle and end,
    p99 a minute and every non-2xx, in build/soak.md (build/soak-smoke.md with --smoke).
  --auth: 1,000 posts in one bulk request against 1,000 single creates over 16 connections, and
    get by id open and with a scoped token, alternated (MySQL, or SQLite with --database-url
    sqlite:FILE); written to BENCHMARKS.md between bench-auth-<database> markers.
  --cluster: get and create through a 3-node Galera cluster and one server, both started for the
    run (npm run cluster's nodes); report in build/bench-cluster.md (10,000 rows unless --rows).
  Environment: BENCH_ROWS, BENCH_DURATION, BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_DATABASE_URL,
  --workers: the service's WEB_CONCURRENCY, one service each (default 1,2; scale runs the first).
  BENCH_OUT, BENCH_SCALE, BENCH_WORKERS. The database name must contain "bench": the run empties and reseeds it.`;

export class OptionsError extends Error {}

function number(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined || value === '') return undefined;
  const n = Number(value.replace(/_/g, ''));
  if (!Number.isFinite(n) || n < min) throw new OptionsError(`${name} must be a number of at least ${min}, got "${value}"`);
  return n;
}

function counts(name: string, value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  if (value === '' || value === 'none') return [];
  return value.split(',').map((v) => Math.round(number(name, v.trim(), 1)!));
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): BenchOptions | 'help' {
  const { values: f } = parseArgs({
    args: argv,
    options: {
      smoke: { type: 'boolean', default: false },
      cluster: { type: 'boolean', default: false },
      search: { type: 'boolean', default: false },
      reimport: { type: 'boolean', default: false },
      soak: { type: 'boolean', default: false },
      auth: { type: 'boolean', default: false },
      rate: { type: 'string' },
      rows: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      'database-url': { type: 'string' },
      out: { type: 'string' },
      scale: { type: 'string' },
      only: { type: 'string' },
      profile: { type: 'string' },
      workers: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (f.help) return 'help';
  const smoke = Boolean(f.smoke);
  const cluster = Boolean(f.cluster);
  const search = Boolean(f.search);
  const soak = Boolean(f.soak);
  const options: BenchOptions = {
    rows: Math.round(
      number('--rows', f.rows ?? env.BENCH_ROWS, 20) ??
        (soak ? (smoke ? 500 : 20_000) : smoke ? 2000 : cluster ? 10_000 : search ? 1_000_000 : 100_000),
    ),
    duration: number('--duration', f.duration ?? env.BENCH_DURATION, 0.1) ?? (soak ? (smoke ? 5 : 600) : smoke ? 1 : 10),
    warmup: number('--warmup', f.warmup ?? env.BENCH_WARMUP, 0) ?? (smoke ? 0.3 : 2),
    connections: Math.round(number('--connections', f.connections ?? env.BENCH_CONNECTIONS, 1) ?? (soak ? 8 : 32)),
    databaseUrl: f['database-url'] ?? env.BENCH_DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/records_bench',
    out:
      f.out ??
      env.BENCH_OUT ??
      (soak
        ? `build/soak${smoke ? '-smoke' : ''}.md`
        : cluster
          ? 'build/bench-cluster.md'
          : smoke
            ? `build/bench-smoke${search ? '-search' : f.auth ? '-auth' : ''}.md`
            : 'BENCHMARKS.md'),
    scale: counts('--scale', f.scale ?? env.BENCH_SCALE) ?? (smoke ? [200, 2000] : [10_000, 1_000_000]),
    only: f.only ? f.only.split(',').map((s) => s.trim()) : [],
    profileDir: f.profile,
    workers: counts('--workers', f.workers ?? env.BENCH_WORKERS) ?? [1, 2],
    smoke,
    cluster,
    search,
    reimport: Boolean(f.reimport),
    soak,
    rate: number('--rate', f.rate, 1) ?? (smoke ? 50 : 100),
    auth: Boolean(f.auth),
  };
  if (f.rate && !soak) throw new OptionsError('--rate goes with --soak');
  if (soak && (search || cluster)) throw new OptionsError('--soak runs alone: not with --search or --cluster');
  if (options.reimport && !search) throw new OptionsError('--reimport goes with --search');
  if (search) {
    const unused = [
      cluster && '--cluster',
      f.only && '--only',
      f.scale && '--scale',
      f.profile && '--profile',
      f.connections && '--connections',
    ];
    if (unused.some(Boolean)) throw new OptionsError(`--search does not take ${unused.filter(Boolean).join(', ')}`);
  }
  const sqlite = /^sqlite:/i.test(options.databaseUrl);
  if (sqlite && !search && !soak && !options.auth)
    throw new OptionsError('the benchmark runs on MySQL (only --search and --soak also run on SQLite): --database-url must be mysql://...');
  const name = sqlite ? options.databaseUrl.slice('sqlite:'.length) : new URL(options.databaseUrl).pathname.slice(1);
  if (!sqlite && new URL(options.databaseUrl).protocol !== 'mysql:') {
    throw new OptionsError('--database-url must be mysql://... (or, with --search or --soak, sqlite:FILE)');
  }
  if (!name.split('/').pop()!.includes('bench')) {
    throw new OptionsError(`the database name must contain "bench" (the run empties and reseeds it), got "${name}"`);
  }
  if (!options.workers.length) throw new OptionsError('--workers needs at least one count, e.g. 1,2');
  return options;
}

/**
 * The URL of the database that holds `rows` posts: `<suffix>_<rows>` after the name (before a
 * file's extension).
 */
export function databaseUrlFor(base: string, rows: number, suffix = ''): string {
  if (/^sqlite:/i.test(base)) return base.replace(/(\.[a-z0-9]+)?$/i, (ext) => `${suffix}_${rows}${ext}`);
  const url = new URL(base);
  url.pathname = `/${url.pathname.slice(1)}${suffix}_${rows}`;
  return url.toString();
}
