import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseConfig } from '../src/config';
import { openDb, type Db } from '../src/db/connection';
import { createTestDatabase, dropTestDatabase, freshConfig, MYSQL_SERVER_URL } from './helpers/db';

// The real entry point as an operator runs it: a child process configured by its environment.
// It is run by node itself with tsx's loader (the same code `npx tsx src/main.ts` runs) so that
// no npm wrapper adds its own lines to stderr or stands between the service and its signals.

const ROOT = join(__dirname, '..');
const START_TIMEOUT_MS = 30_000;
const children = new Set<ChildProcess>();
const tmpDirs: string[] = [];

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(env: Record<string, string>): Run {
  const base = { ...process.env };
  for (const k of ['PORT', 'HOST', 'DATABASE_URL', 'BODY_LIMIT']) delete base[k];
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { ...base, HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Waits for the process to end, killing it (and failing) if it runs past the bound. */
async function untilExit(run: Run, ms: number) {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  const result = await Promise.race([run.exited, timedOut]);
  clearTimeout(timer);
  if (result === 'timeout') {
    run.child.kill('SIGKILL');
    await run.exited;
    return { code: null, signal: null, timedOut: true, stdout: run.stdout(), stderr: run.stderr() };
  }
  return { ...result, timedOut: false, stdout: run.stdout(), stderr: run.stderr() };
}

/** The URL that the process says it listens on, once it says so. */
async function listening(run: Run): Promise<string> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    // The start-up log line: {"msg":"listening","url":"http://host:port/",...}
    const m = /"url":"(http:\/\/[^"]+\/)"/.exec(run.stdout());
    if (m) return m[1];
    if (run.child.exitCode !== null) throw new Error(`exited ${run.child.exitCode} before listening: ${run.stderr()}`);
    if (Date.now() > deadline) throw new Error(`not listening after ${START_TIMEOUT_MS} ms: ${run.stdout()} ${run.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function tmpSqliteUrl(): string {
  const dir = mkdtempSync(join(tmpdir(), 'records-main-'));
  tmpDirs.push(dir);
  return `sqlite:${join(dir, 'records.sqlite3')}`;
}

function databaseUrl(config: DatabaseConfig): string {
  if (config.client === 'sqlite') return `sqlite:${config.filename}`;
  const url = new URL(MYSQL_SERVER_URL);
  url.pathname = `/${config.database}`;
  return url.toString();
}

afterEach(async () => {
  // A test that failed half-way must not leave a service running.
  for (const child of children) child.kill('SIGKILL');
});
afterAll(() => {
  for (const dir of tmpDirs) rmSync(dir, { recursive: true, force: true });
});

describe('two instances started at once on a fresh database', () => {
  test('both serve, and the schema is migrated once', async () => {
    const config = freshConfig();
    // What one instance alone records, to compare the racing pair with.
    const reference = await createTestDatabase();
    let db: Db | undefined;
    try {
      const env = { PORT: '0', DATABASE_URL: databaseUrl(config) };
      const runs = [start(env), start(env)];
      const urls = await Promise.all(runs.map(listening));
      expect(new Set(urls).size).toBe(2);
      // Opened only now: on SQLite, opening creates the file, and the pair must find none.
      db = openDb(config);

      for (const url of urls) {
        const res = await fetch(`${url}api/posts/`);
        const body = (await res.json()) as { count: number; results: unknown[] };
        expect({ status: res.status, count: body.count, results: body.results }).toEqual({ status: 200, count: 0, results: [] });
      }

      // One database behind both: a write through one is read through the other.
      const created = await fetch(`${urls[0]}api/posts/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Shared', content: 'Written through the first instance', author: 'ada' }),
      });
      expect(created.status).toBe(201);
      const record = (await created.json()) as { id: number };
      const read = await fetch(`${urls[1]}api/posts/${record.id}/`);
      expect({ status: read.status, body: await read.json() }).toEqual({ status: 200, body: record });

      const names = (await db('knex_migrations').select('name').orderBy('id')).map((r: { name: string }) => r.name);
      const once = (await reference.db('knex_migrations').select('name').orderBy('id')).map((r: { name: string }) => r.name);
      expect(once.length).toBeGreaterThan(0);
      expect(names).toEqual(once);
      const locks = await db('knex_migrations_lock').select('is_locked');
      expect(locks.map((l: { is_locked: unknown }) => Number(l.is_locked))).toEqual([0]);

      for (const run of runs) run.child.kill('SIGTERM');
      const exits = await Promise.all(runs.map((run) => untilExit(run, 10_000)));
      expect(exits.map((e) => ({ timedOut: e.timedOut, code: e.code, stderr: e.stderr }))).toEqual([
        { timedOut: false, code: 0, stderr: '' },
        { timedOut: false, code: 0, stderr: '' },
      ]);
    } finally {
      await reference.drop();
      await dropTestDatabase(config, db);
    }
  }, 2 * START_TIMEOUT_MS + 30_000);
});
