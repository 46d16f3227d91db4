import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { type IncomingMessage, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, minimalEnv, ROOT } from '../../../scripts/lib/service-process';

// `npm start` as a user runs it, with two workers, stopped through the npm process alone: npm
// passes SIGTERM and SIGINT to its script's shell, which died of the one and waited on through
// the other, the service running on. The whole tree must stop, gracefully, npm exiting 0.
// `npm run build` first.
let dir: string;
const leftOver = new Set<number>();
beforeAll(() => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'npm-start-'));
});
afterAll(() => {
  for (const pid of leftOver) if (alive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** Parent of each process, from /proc. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      out.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** `root` and every process below it. */
function tree(root: number): number[] {
  const byParent = parents();
  const found = [root];
  for (let i = 0; i < found.length; i++) for (const [pid, parent] of byParent) if (parent === found[i]) found.push(pid);
  return found;
}

/** Running: neither gone nor a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function untilGone(pids: number[], ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return pids.filter(alive);
}

let runs = 0;
/** `npm start` on a SQLite file of its own, once it logs `listening`: its port and its log. */
async function npmStart(): Promise<{ npm: ChildProcess; port: number; out: () => string; exited: Promise<number | null> }> {
  const env = {
    ...minimalEnv(),
    WEB_CONCURRENCY: '2',
    PORT: '0',
    DATABASE_URL: `sqlite:${join(dir, `${++runs}.sqlite3`)}`,
    npm_config_update_notifier: 'false',
  };
  const npm = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  npm.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  npm.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 90_000;
  for (;;) {
    const port = /"port":(\d+),[^\n]*"msg":"listening"/.exec(out)?.[1];
    if (port) return { npm, port: Number(port), out: () => out, exited };
    if (npm.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not listen:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A POST whose body is half sent: in flight until `finish()` sends the rest. */
function upload(port: number) {
  const body = JSON.stringify({ title: 'in flight', content: 'x'.repeat(2000), author: 'npm' });
  const headers = { 'content-type': 'application/json', 'content-length': body.length };
  const req = request({ port, host: '127.0.0.1', path: '/api/posts/', method: 'POST', headers });
  const answered = new Promise<{ status?: number; error?: string }>((resolve) => {
    req.on('response', (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
  req.write(body.slice(0, 1000));
  return { answered, finish: () => req.end(body.slice(1000)) };
}

describe.each(['SIGTERM', 'SIGINT'] as const)('%s to the npm process of `npm start`', (signal) => {
  test('stops the primary and its workers, after answering the request in flight; npm exits 0', async () => {
    const { npm, port, out, exited } = await npmStart();
    const pids = tree(npm.pid!);
    pids.forEach((pid) => leftOver.add(pid));
    // npm, the primary and two workers (and a shell, where one stays between them).
    expect(pids.length).toBeGreaterThanOrEqual(4);
    const inFlight = upload(port);
    await new Promise((r) => setTimeout(r, 300));
    npm.kill(signal);
    await new Promise((r) => setTimeout(r, 500));
    inFlight.finish();
    expect(await inFlight.answered).toEqual({ status: 201 });
    expect(await exited).toBe(0);
    expect(await untilGone(pids, 15_000)).toEqual([]);
    expect(out()).toMatch(/"msg":"shutting down"[^\n]*\n(.*\n)*.*"msg":"stopped"/);
  }, 150_000);
});

test('npm killed outright: the service notices its parent is gone and stops', async () => {
  const { npm, out } = await npmStart();
  const pids = tree(npm.pid!);
  pids.forEach((pid) => leftOver.add(pid));
  npm.kill('SIGKILL');
  expect(await untilGone(pids, 20_000)).toEqual([]);
  expect(out()).toMatch(/"msg":"the npm process that started the service has exited: stopping"/);
}, 150_000);
