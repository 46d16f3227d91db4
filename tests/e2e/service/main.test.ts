import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { dialect, dropTestDatabase, freshConfig } from '../../helpers/db';
import { databaseUrl, spawnService, startService } from '../../helpers/service';

// src/main.ts in a process of its own: how it refuses to start, and what it says when it starts.
const config = freshConfig();
const DATABASE_URL = databaseUrl(config);
let taken: Server;
let takenPort: number;
let closedPort: number;

beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as AddressInfo).port;
  // A port that was free a moment ago and that nothing listens on: connections are refused.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
});
afterAll(async () => {
  await new Promise((resolve) => taken.close(resolve));
  await dropTestDatabase(config);
});

describe('a bad configuration stops the service with one line and exit code 1', () => {
  test.each<[string, { given: () => Record<string, string>; want: () => RegExp }]>([
    [
      'unknown database scheme',
      { given: () => ({ DATABASE_URL: 'postgres://localhost/records' }), want: () => /DATABASE_URL: unknown scheme "postgres"/ },
    ],
    ['non-numeric port', { given: () => ({ DATABASE_URL, PORT: 'eighty' }), want: () => /PORT must be a whole number, got "eighty"/ }],
    [
      'port already taken',
      {
        given: () => ({ DATABASE_URL, PORT: String(takenPort) }),
        want: () => new RegExp(`port ${takenPort} on 127\\.0\\.0\\.1 is already in use`),
      },
    ],
    [
      'database unreachable at start',
      {
        given: () => ({ DATABASE_URL: `mysql://root@127.0.0.1:${closedPort}/records_test_unreachable` }),
        want: () =>
          new RegExp(`cannot reach the database \\(MySQL 127\\.0\\.0\\.1:${closedPort}/records_test_unreachable\\): .*ECONNREFUSED`),
      },
    ],
    [
      'unreadable token file',
      {
        given: () => ({ DATABASE_URL, API_TOKENS_FILE: '/nonexistent/tokens' }),
        want: () => /API_TOKENS_FILE: cannot read \/nonexistent\/tokens \(ENOENT\)/,
      },
    ],
  ])('%s', async (_name, { given, want }) => {
    const service = spawnService({ HOST: '127.0.0.1', ...given() });
    const { code } = await service.exited;
    expect(code).toBe(1);
    const lines = service.stderr().split('\n').filter(Boolean);
    expect(lines).toEqual([expect.stringMatching(/^records API failed to start: /)]);
    expect(lines[0]).toMatch(want());
    expect(service.stderr()).not.toMatch(/\n\s+at /);
    expect(service.stdout()).toBe('');
  });
});

describe('the start-up log', () => {
  test.each<[string, { given: Record<string, string>; want: { level: string; msg: string }[] }]>([
    [
      'without API_TOKENS it says that the API is open',
      {
        given: {},
        want: [
          {
            level: 'warn',
            msg: 'API_TOKENS, TOKENS_FILE and JWT_PUBLIC_KEY_FILE/JWT_JWKS_FILE are not set: /api/ is open to every client',
          },
        ],
      },
    ],
    [
      'with API_TOKENS it says that a token is required, without the token',
      {
        given: { API_TOKENS: 'tok_startup_log_0123456789' },
        want: [{ level: 'info', msg: '/api/ requires a bearer token' }],
      },
    ],
  ])('%s', async (_name, { given, want }) => {
    const service = await startService({ DATABASE_URL, ...given });
    try {
      const listening = service.lines.find((l) => l.msg === 'listening')!;
      expect(listening).toMatchObject({
        level: 'info',
        port: service.port,
        database: expect.stringContaining(dialect === 'mysql' ? 'MySQL' : 'SQLite'),
      });
      expect(service.lines).toEqual(expect.arrayContaining(want.map((w) => expect.objectContaining(w))));
      expect(service.stdout()).not.toContain('tok_startup_log_0123456789');
    } finally {
      service.child.kill('SIGTERM');
      expect((await service.exited).code).toBe(0);
    }
  });
});

test.each([
  ['', {}, 3],
  [', at most one fewer than DB_POOL_SIZE', { DB_POOL_SIZE: '3' }, 2],
])(
  "DB_SEARCH_TURNS sets how many of a search's costly statements run at once on MySQL%s: logged, and in /metrics",
  async (_, env, turns) => {
    const service = await startService({ DATABASE_URL, DB_SEARCH_TURNS: '3', ...env });
    try {
      const listening = service.lines.find((l) => l.msg === 'listening')!;
      const capped = service.lines.filter((l) => l.msg === 'DB_SEARCH_TURNS is capped at DB_POOL_SIZE - 1');
      const metrics = (await (await fetch(`${service.url}/metrics`)).text()).split('\n');
      if (dialect === 'mysql') {
        expect(listening).toMatchObject({ searchTurns: turns });
        expect(capped).toEqual(turns < 3 ? [expect.objectContaining({ level: 'warn', asked: 3, searchTurns: turns, poolSize: 3 })] : []);
        expect(metrics).toContain(`db_search_turns_max ${turns}`);
      } else {
        expect(capped).toEqual([]);
        expect(listening).not.toHaveProperty('searchTurns');
        expect(metrics.filter((l) => l.startsWith('db_search_turns'))).toEqual([]);
      }
    } finally {
      service.child.kill('SIGTERM');
      expect((await service.exited).code).toBe(0);
    }
  },
);

describe('the built entry (node dist/main.js, what `npm start` runs)', () => {
  // dist/ is built by `npm test` (and `npm install`); alone: `npm run build` first.
  test('starts, finds the spec and the docs from dist/, answers, and stops on SIGTERM', async () => {
    const service = await startService({ DATABASE_URL }, 60000, 'built');
    try {
      expect(service.child.spawnargs.slice(1)).toEqual([expect.stringMatching(/[/\\]dist[/\\]main\.js$/)]);
      const spec = await fetch(`${service.url}/openapi.json`);
      expect({ status: spec.status, openapi: ((await spec.json()) as { openapi: string }).openapi }).toEqual({
        status: 200,
        openapi: '3.0.3',
      });
      const docs = await fetch(`${service.url}/docs`);
      expect({ status: docs.status, type: docs.headers.get('content-type') }).toEqual({
        status: 200,
        type: expect.stringMatching(/^text\/html/),
      });
      const created = await fetch(`${service.url}/api/posts/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Built', content: 'Served by dist/main.js', author: 'ada' }),
      });
      expect(created.status).toBe(201);
      const record = (await created.json()) as { id: number };
      const read = await fetch(`${service.url}/api/posts/${record.id}/`);
      expect({ status: read.status, body: await read.json() }).toEqual({ status: 200, body: record });
    } finally {
      expect(await service.stop('SIGTERM', 10_000)).toEqual({ code: 0, signal: null });
    }
    expect(service.stderr()).toBe('');
  });
});
