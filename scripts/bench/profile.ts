// Summarises a V8 CPU profile written by `npm run bench -- --profile DIR`: where the service's
// busy time went while it served requests (start-up and idle time left out), by package and by
// function. Usage: npx tsx scripts/bench/profile.ts DIR/CPU.*.cpuprofile [lines]
import { readFileSync } from 'node:fs';

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Node {
  id: number;
  callFrame: Frame;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, linesArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: npx tsx scripts/bench/profile.ts FILE.cpuprofile [lines]');
  process.exit(1);
}
const lines = Number(linesArg ?? 20);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const name = (f: Frame) =>
  `${f.functionName || '(anonymous)'} ${f.url
    .replace(/^.*node_modules\//, '')
    .replace(/^file:\/\//, '')
    .replace(process.cwd() + '/', '')}${f.url ? `:${f.lineNumber + 1}` : ''}`;
const pkg = (f: Frame) => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f.url);
  if (m) return m[1];
  if (f.url.startsWith('node:')) return 'node (core)';
  if (f.url.includes('/src/')) return 'src (ours)';
  return f.url ? f.url : f.functionName || '(native)';
};
const stack = (id: number) => {
  const out: Frame[] = [];
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) out.push(nodes.get(cur)!.callFrame);
  return out;
};

// The window: from the first sample that handles an HTTP request to the last one.
const serving = profile.samples.map((id) => stack(id).some((f) => f.functionName === 'parserOnIncoming'));
const first = serving.indexOf(true);
const last = serving.lastIndexOf(true);
if (first === -1) {
  console.error('no sample handles an HTTP request; was the service driven?');
  process.exit(1);
}
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const packages = new Map<string, number>();
let busy = 0;
let idle = 0;
for (let k = first; k <= last; k++) {
  const t = profile.timeDeltas[k] ?? 0;
  const frames = stack(profile.samples[k]);
  if (frames[0].functionName === '(idle)') {
    idle += t;
    continue;
  }
  busy += t;
  const add = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + t);
  add(self, name(frames[0]));
  add(packages, pkg(frames[0]));
  for (const key of new Set(frames.map(name))) add(inclusive, key);
}
const top = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, lines)
    .map(([k, t]) => `${((100 * t) / busy).toFixed(1).padStart(6)}%  ${k}`)
    .join('\n');
console.log(`serving window ${((busy + idle) / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s; shares of busy time:`);
console.log(
  `\nself time by package\n${top(packages)}\n\nself time by function\n${top(self)}\n\ninclusive time by function\n${top(inclusive)}`,
);
