// The benchmark report, in Markdown: printed, and written between markers in the report file,
// so that what people write around it in BENCHMARKS.md survives the next run.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { QueryTimes } from './database';
import type { Measurement } from './scenarios';

export const THROUGHPUT_TARGET = 0.7;
export const SCALE_TARGET = 2;

export interface ScenarioResult {
  title: string;
  shown: string;
  service: Measurement;
  baseline: Measurement;
  /** The service with each WEB_CONCURRENCY measured (the first is `service`). */
  workers: { workers: number; service: Measurement }[];
}

export interface ScaleResult {
  rows: number;
  service: Measurement;
  baseline: Measurement;
  queries: QueryTimes;
}

export interface Report {
  when: Date;
  command: string;
  rows: number;
  duration: number;
  warmup: number;
  connections: number;
  /** The machine's load average (1, 5, 15 min) when the run began. */
  load: string;
  machine: string;
  /** Cores of the machine (load generator, servers and database share them). */
  cores: number;
  seeded: string[];
  scenarios: ScenarioResult[];
  scale: ScaleResult[];
}

const int = (n: number) => Math.round(n).toLocaleString('en');
const ms = (n: number) => (n < 10 ? n.toFixed(1) : int(n));
const failed = (m: Measurement) =>
  `${m.shed ? ` (+${int(m.shed)}×503)` : ''}${m.failures ? ` ⚠ ${int(m.failures)} failed` : ''}${m.requests ? '' : ' ⚠ no response'}`;
const cpuCost = (m: Measurement) => (m.cpuMsPerRequest === undefined ? '?' : m.cpuMsPerRequest.toFixed(2));
const cpuSplit = (m: Measurement) =>
  m.cpu ? [m.cpu.serverMs, m.cpu.databaseMs, m.cpu.loadGeneratorMs, m.cpu.machineMs].map((x) => x.toFixed(2)).join(' / ') : '?';
const ceiling = (m: Measurement, first: number, cores: number) =>
  m.cpu?.machineMs && first ? ((cores * 1000) / m.cpu.machineMs / first).toFixed(2) : '?';
const other = (s: { service: Measurement; baseline: Measurement }) =>
  [s.service, s.baseline].map((m) => (m.foreignCores === undefined ? '?' : m.foreignCores.toFixed(1))).join(' / ');

export function ratio(r: ScenarioResult): number {
  return r.baseline.requestsPerSecond ? r.service.requestsPerSecond / r.baseline.requestsPerSecond : 0;
}

export function renderReport(r: Report): string {
  const lines = [
    `Run ${r.when.toISOString().slice(0, 16).replace('T', ' ')} UTC: \`${r.command}\`, ${int(r.rows)} posts, ` +
      `${r.connections} connections (keep-alive), ${r.duration} s measured per scenario and server after a ${r.warmup} s warm-up; ` +
      'per scenario the service runs first, then the baseline (`scripts/bench/baseline.ts`: express + mysql2, the same SQL and JSON, no spec routing or validation), on the same database.',
    '',
    `Machine: ${r.machine}. Load average (uptime) at the start: ${r.load}.`,
    ...(r.seeded.length ? ['', `Seeded in this run: ${r.seeded.join('; ')}.`] : []),
    '',
    '| scenario | request | service req/s | p50 ms | p99 ms | baseline req/s | p50 ms | p99 ms | service ÷ baseline | target ≥ 0.7 | server CPU ms/req | other load |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|:-:|--:|--:|',
    ...r.scenarios.map(
      (s) =>
        `| ${s.title} | \`${s.shown}\` | ${int(s.service.requestsPerSecond)}${failed(s.service)} | ${ms(s.service.p50)} | ${ms(s.service.p99)} | ` +
        `${int(s.baseline.requestsPerSecond)}${failed(s.baseline)} | ${ms(s.baseline.p50)} | ${ms(s.baseline.p99)} | ` +
        `${ratio(s).toFixed(2)} | ${ratio(s) >= THROUGHPUT_TARGET ? 'met' : 'missed'} | ${cpuCost(s.service)} / ${cpuCost(s.baseline)} | ${other(s)} |`,
    ),
    '',
    'req/s counts successful responses; p50 and p99 are their latencies. (+N×503): requests the service turned away ' +
      'when no database connection came free within its 2 s limit. Server CPU: CPU time of the service / baseline process ' +
      'per response, which other programs on the machine barely change. Other load: cores kept busy by programs other than ' +
      'the two servers, the load generator and the database, during the service / baseline measurement (this machine is shared).',
  ];
  const counts = r.scenarios[0]?.workers.map((w) => w.workers) ?? [];
  if (counts.length > 1) {
    const one = (s: ScenarioResult) => s.workers[0].service.requestsPerSecond;
    lines.push(
      '',
      `The service with each \`WEB_CONCURRENCY\` (worker processes), against the same baseline; the main table is ${counts[0]}. ` +
        'CPU ms per response: the service (the primary and every worker) / the database server / the load generator / ' +
        'the whole machine (all cores, these and everything else). Ceiling: the responses a second all ' +
        `${r.cores} cores could give at that whole-machine cost, ÷ the first row's req/s: more workers cannot pass it ` +
        'on this machine, whatever they do, unless the cost per response falls.',
      '',
      '| scenario | workers | req/s | p50 ms | p99 ms | ÷ first row | ÷ baseline | CPU ms/req: service / database / load generator / machine | ceiling ÷ first row | other load |',
      '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
      ...r.scenarios.flatMap((s) =>
        s.workers.map(
          (w) =>
            `| ${s.title} | ${w.workers} | ${int(w.service.requestsPerSecond)}${failed(w.service)} | ${ms(w.service.p50)} | ${ms(w.service.p99)} | ` +
            `${one(s) ? (w.service.requestsPerSecond / one(s)).toFixed(2) : '?'} | ` +
            `${s.baseline.requestsPerSecond ? (w.service.requestsPerSecond / s.baseline.requestsPerSecond).toFixed(2) : '?'} | ` +
            `${cpuSplit(w.service)} | ${ceiling(w.service, one(s), r.cores)} | ` +
            `${w.service.foreignCores === undefined ? '?' : w.service.foreignCores.toFixed(1)} |`,
        ),
      ),
    );
  }
  const first = r.scenarios.find((s) => s.title === 'cursor page 1');
  const deep = r.scenarios.find((s) => s.title === 'cursor page deep');
  if (first?.service.p50 && deep) {
    const depth = deep.service.p50 / first.service.p50;
    lines.push(
      '',
      `Cursor page deep ÷ cursor page 1, service p50: **${depth.toFixed(2)}** (target ≤ 1.5: ${depth <= 1.5 ? 'met' : 'missed'}).`,
    );
  }
  if (r.scale.length >= 2) {
    const small = r.scale[0];
    const large = r.scale[r.scale.length - 1];
    const growth = small.service.p50 ? large.service.p50 / small.service.p50 : 0;
    lines.push(
      '',
      `### Unfiltered list page 1 by table size (\`GET /api/posts/\`)`,
      '',
      '| posts | service req/s | p50 ms | p99 ms | baseline req/s | p50 ms | p99 ms | database alone: COUNT(*) ms | page query ms | COUNT(*) plan | other load |',
      '|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|',
      ...r.scale.map(
        (s) =>
          `| ${int(s.rows)} | ${int(s.service.requestsPerSecond)}${failed(s.service)} | ${ms(s.service.p50)} | ${ms(s.service.p99)} | ` +
          `${int(s.baseline.requestsPerSecond)}${failed(s.baseline)} | ${ms(s.baseline.p50)} | ${ms(s.baseline.p99)} | ` +
          `${s.queries.countMs.toFixed(1)} | ${s.queries.pageMs.toFixed(1)} | ${s.queries.countPlan} | ${other(s)} |`,
      ),
      '',
      `Service p50 at ${int(large.rows)} ÷ at ${int(small.rows)} posts: **${growth.toFixed(1)}** ` +
        `(target ≤ ${SCALE_TARGET}: ${growth <= SCALE_TARGET ? 'met' : 'missed'}). The database timings are single queries, one at a time, with no load.`,
    );
  }
  return lines.join('\n');
}

/** Writes `markdown` between the `<block>:begin`/`<block>:end` markers of `file`, keeping the rest. */
export function writeReport(file: string, markdown: string, block = 'bench'): void {
  const begin = `<!-- ${block}:begin: written by \`npm run bench\`; edit outside these markers -->`;
  const end = `<!-- ${block}:end -->`;
  const text = `${begin}\n${markdown}\n${end}`;
  const old = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const from = old.indexOf(begin);
  const to = old.indexOf(end, from);
  const whole =
    from !== -1 && to > from ? `${old.slice(0, from)}${text}${old.slice(to + end.length)}` : `${old || '# Benchmarks\n\n'}${text}\n`;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, whole);
}
