import type { Server, ServerOptions } from 'node:http';
import { connect, type Socket } from 'node:net';
import express from 'express';
import { createApp } from '../../../src/app';
import { newToken } from '../../../src/auth/tokensFile';
import { listen } from '../../../src/http/server';
import { createLogger } from '../../../src/logger';
import { problemTypeViolation } from '../../helpers/contract';
import { createTestDatabase, type TestDatabase } from '../../helpers/db';

// Node checks for requests that are late every connectionsCheckingInterval (30 s by default).
const quick: ServerOptions = { headersTimeout: 100, requestTimeout: 100, connectionsCheckingInterval: 20 };

/** Sends on a new connection (`send`) and returns all that comes back until the server closes it. */
function exchange(port: number, send: (socket: Socket) => void): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => send(socket));
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

// Requests that Node itself refuses, before express sees them, still get problem+json, with a
// request id and the security headers of every other answer.
const big = 'a'.repeat(20_000);
test.each([
  ['headers over 16 KiB', { given: `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`, want: 431 }],
  ['a URL over 16 KiB', { given: `GET /api/posts/?cursor=${big} HTTP/1.1\r\nHost: x\r\n\r\n`, want: 431 }],
  ['an unknown method', { given: 'FOO /api/posts/ HTTP/1.1\r\nHost: x\r\nX-Request-Id: mine-1\r\n\r\n', want: 400 }],
  ['a request line that is no HTTP', { given: 'hello there\r\n\r\n', want: 400 }],
  // Framings that a proxy in front could read otherwise than Node does (request smuggling).
  [
    'Content-Length beside Transfer-Encoding',
    { given: 'POST /api/posts/ HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', want: 400 },
  ],
  [
    'two Content-Length values',
    { given: 'POST /api/posts/ HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', want: 400 },
  ],
  [
    'a Transfer-Encoding that does not end in chunked',
    { given: 'POST /api/posts/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n', want: 400 },
  ],
  // The client stays connected (it does not end its side) and never ends its headers.
  [
    'headers that do not arrive in time',
    { given: 'GET / HTTP/1.1\r\nHost: x\r\nX-Request-Id: mine-1\r\n', want: 408, options: quick, end: false },
  ],
])('%s', async (_n, { given, want, options, end = true }: { given: string; want: number; options?: ServerOptions; end?: boolean }) => {
  const { server, port } = await listen(express(), 0, '127.0.0.1', options);
  try {
    const raw = await exchange(port, (socket) => (end ? socket.end(given) : socket.write(given)));
    const [head, body] = raw.split('\r\n\r\n');
    const [statusLine, ...lines] = head.split('\r\n');
    const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const problem = JSON.parse(body);
    expect(statusLine).toMatch(new RegExp(`^HTTP/1.1 ${want} `));
    expect(headers.get('content-type')).toBe('application/problem+json');
    expect(problem).toEqual({
      type: expect.any(String),
      status: want,
      title: expect.any(String),
      detail: expect.any(String),
      request_id: expect.any(String),
    });
    // Written on the socket, past the app: its type is held to the table as the app's are.
    expect(problemTypeViolation(problem, want, new Headers([...headers]))).toBeUndefined();
    // The service's own id: the request's headers could not be read.
    expect(headers.get('x-request-id')).toBe(problem.request_id);
    expect(problem.request_id).not.toBe('mine-1');
    expect(headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(headers.get('x-content-type-options')).toBe('nosniff');
  } finally {
    server.close();
  }
});

const statusLines = (raw: string) => raw.match(/HTTP\/1.1 \d+ [^\r]*/g);

// A keep-alive client sends a bad request while the answer to its first one is being written: the
// first answer is finished whole, then the 400 follows, then the connection closes. It was cut, as
// Node's own handler does, so a pipelining client lost an answer it was owed.
test('a bad request behind an answer that is being written: that answer whole, then 400', async () => {
  const app = express();
  app.get('/slow', (_req, res) => {
    res.type('text/plain');
    res.write('first part;');
    setTimeout(() => res.end('second part'), 300);
  });
  const { server, port } = await listen(app, 0, '127.0.0.1');
  try {
    const raw = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n'));
      let text = '';
      socket.on('data', (c: Buffer) => {
        // Once the first answer has begun: a second request that is no HTTP.
        if (!text) socket.write('hello there\r\n\r\n');
        text += c.toString('latin1');
      });
      socket.on('error', () => {});
      socket.on('close', () => resolve(text));
    });
    expect(statusLines(raw)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 400 Bad Request']);
    // The chunked answer ends whole (its last chunk) before the next one begins.
    expect(raw).toMatch(/first part;\r\n[0-9a-f]+\r\nsecond part\r\n0\r\n\r\nHTTP\/1.1 400 /);
    expect(JSON.parse(raw.slice(raw.lastIndexOf('\r\n\r\n') + 4))).toMatchObject({ status: 400 });
  } finally {
    server.close();
  }
});

// Headers that arrived, then a body that never will: the app has the request already, so the
// answer comes from it, under the client's id, and its log line says so too. A body that does
// not arrive in time (requestTimeout) is a 408; one cut by the client closing its side (FIN) is a
// 400 at once (it waited until shutdown, past every timeout).
const head = (id: string) =>
  `POST /api/posts/ HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
test.each([
  [
    'a body that does not arrive in time',
    { id: 'mine-2', send: (s: Socket) => s.write(`${head('mine-2')}{"title":`), options: quick, want: 408 },
  ],
  [
    'a body cut by the client closing its side',
    { id: 'mine-3', send: (s: Socket) => s.end(`${head('mine-3')}{}`), options: {}, want: 400 },
  ],
  // The client stays connected, and Node's timeouts are the defaults: the 400 must come from the
  // parse error itself, at once. It hung past the request timeout and held shutdown.
  [
    'a chunked body whose chunk size is no hex number',
    {
      id: 'mine-7',
      send: (s: Socket) => s.write(`${head('mine-7').replace('Content-Length: 100', 'Transfer-Encoding: chunked')}zz\r\n{}\r\n0\r\n\r\n`),
      options: {},
      want: 400,
    },
  ],
])('%s: answered under the client id, and the log line says so', async (_n, { id, send, options, want }) => {
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger('info', { write: (line: string) => void logs.push(JSON.parse(line)) });
  const database = await createTestDatabase();
  const app = await createApp({ db: database.db, bodyLimit: 1024 * 1024, fallbackHost: 'localhost', logger });
  const { server, port, drain } = await listen(app, 0, '127.0.0.1', options);
  try {
    const started = Date.now();
    const raw = await exchange(port, send);
    if (options !== quick) expect(Date.now() - started).toBeLessThan(1000);
    const [top, body] = raw.split('\r\n\r\n');
    expect(top).toMatch(new RegExp(`^HTTP/1.1 ${want} `));
    expect(top).toMatch(new RegExp(`\r\nX-Request-Id: ${id}\r\n`, 'i'));
    expect(top).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
    expect(JSON.parse(body)).toMatchObject({ status: want, request_id: id });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(logs.filter((l) => l.requestId === id).map((l) => [l.msg, l.status])).toEqual([['request', want]]);
    expect(drain.inFlight()).toBe(0);
    // Nothing is left for shutdown to wait for.
    expect(await drain.shutdown(1000)).toBe(true);
  } finally {
    server.close();
    await database.drop();
  }
});

// Requests Node would answer itself with a bare status: an HTTP/1.1 request without Host (400),
// and an expectation the server does not meet (417). The app's problem+json instead, under the
// client's id; HTTP/1.0 may leave Host out.
test.each([
  ['HTTP/1.1 without Host', { given: 'GET /api/posts/ HTTP/1.1\r\nX-Request-Id: mine-4\r\n\r\n', want: 400, id: 'mine-4' }],
  [
    'an Expect other than 100-continue',
    { given: 'GET /api/posts/ HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nX-Request-Id: mine-5\r\n\r\n', want: 417, id: 'mine-5' },
  ],
  // Not ended: the client's FIN before an answer that takes a while (MySQL) would abort it (Node's).
  ['HTTP/1.0 without Host', { given: 'GET /api/posts/ HTTP/1.0\r\nX-Request-Id: mine-6\r\n\r\n', want: 200, id: 'mine-6', end: false }],
])('%s', async (_n, { given, want, id, end = true }: { given: string; want: number; id: string; end?: boolean }) => {
  const database = await createTestDatabase();
  const app = await createApp({ db: database.db, bodyLimit: 1024 * 1024, fallbackHost: 'localhost' });
  const { server, port } = await listen(app, 0, '127.0.0.1');
  try {
    const raw = await exchange(port, (socket) => (end ? socket.end(given) : socket.write(given)));
    const [top, body] = raw.split('\r\n\r\n');
    expect(top).toMatch(new RegExp(`^HTTP/1.[01] ${want} `));
    expect(top).toMatch(new RegExp(`\r\nX-Request-Id: ${id}\r\n`, 'i'));
    expect(top).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
    if (want !== 200) {
      expect(top).toMatch(/\r\nContent-Type: application\/problem\+json/i);
      expect(JSON.parse(body)).toMatchObject({ status: want, request_id: id });
    }
  } finally {
    server.close();
    await database.drop();
  }
});

/**
 * A keep-alive client pipelines a second request behind one the app is still computing. The app
 * here answers `/slow` after a while and reads `/body`'s body whole before answering; it keeps the
 * client's request id, as the service does, so that an answer from the app can be told.
 */
async function pipelined(second: string): Promise<string> {
  const app = express();
  app.use((req, res, next) => {
    res.setHeader('X-Request-Id', req.get('X-Request-Id') ?? 'none');
    next();
  });
  app.get('/slow', (_req, res) => void setTimeout(() => res.type('text/plain').end('first answer'), 400));
  app.post('/body', express.text(), (req, res) => res.type('text/plain').end(`got ${req.body}`));
  const { server, port } = await listen(app, 0, '127.0.0.1', quick);
  try {
    return await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(`GET /slow HTTP/1.1\r\nHost: x\r\n\r\n${second}`));
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => resolve(text));
    });
  } finally {
    server.close();
  }
}

test.each([
  // Its body does not arrive in time: the 408 is the second request's answer, from the app.
  [
    'a body that does not arrive in time',
    'POST /body HTTP/1.1\r\nHost: x\r\nX-Request-Id: mine-3\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nabc',
    408,
  ],
  // Its headers do not: the 408 comes after the first answer, not as it.
  ['headers that do not arrive in time', 'GET /slow HTTP/1.1\r\nHost: x\r\n', 408],
  // It is no HTTP: the 400 likewise.
  ['a request that is no HTTP', 'hello there\r\n\r\n', 400],
])('%s behind a request still in the app: the first answer comes whole, then the error', async (_n, second, want) => {
  const raw = await pipelined(second);
  expect(statusLines(raw)).toEqual(['HTTP/1.1 200 OK', expect.stringMatching(new RegExp(`^HTTP/1.1 ${want} `))]);
  expect(raw).toContain('\r\n\r\nfirst answer');
  expect(JSON.parse(raw.slice(raw.lastIndexOf('\r\n\r\n') + 4))).toMatchObject({ status: want });
  if (second.includes('mine-3')) expect(raw).toMatch(/\r\nX-Request-Id: mine-3\r\n/i);
});

interface Answer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** The answers in what a connection received, in order (each with a Content-Length or no body). */
function answersIn(raw: string): Answer[] {
  const answers: Answer[] = [];
  let at = 0;
  while (at < raw.length) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end === -1) break;
    const [statusLine, ...lines] = raw.slice(at, end).split('\r\n');
    const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers.get('content-length') ?? 0);
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body: raw.slice(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return answers;
}

/**
 * Sends `text` without ending the client's side, then collects what comes back until the server
 * closes the connection (`closed`) or `ms` pass. `onData` may send more as answers arrive.
 */
function talk(
  port: number,
  text: string,
  { ms = 3000, onData }: { ms?: number; onData?: (received: string, socket: Socket) => void } = {},
): Promise<{ answers: Answer[]; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let raw = '';
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ answers: answersIn(raw), closed });
    };
    const timer = setTimeout(() => done(false), ms);
    socket.on('data', (c: Buffer) => {
      raw += c.toString('latin1');
      onData?.(raw, socket);
    });
    socket.on('error', () => {});
    socket.on('close', () => done(true));
  });
}

/** What a problem answer of the service carries, whoever wrote it. */
function expectProblem(answer: Answer, status: number): void {
  expect(answer.status).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json(;|$)/);
  expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  const problem = JSON.parse(answer.body);
  expect(problem).toMatchObject({ status, request_id: answer.headers.get('x-request-id') });
  expect(problemTypeViolation(problem, status, new Headers([...answer.headers]))).toBeUndefined();
}

describe('the real app, with scoped tokens', () => {
  const reader = newToken('reader', ['posts:read']);
  const writer = newToken('writer', ['posts:write']);
  const post = JSON.stringify({ title: 't', content: 'c', author: 'a' });
  let database: TestDatabase;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    database = await createTestDatabase();
    const app = await createApp({
      db: database.db,
      bodyLimit: 1024 * 1024,
      fallbackHost: 'localhost',
      tokensFile: { version: 1, tokens: [reader.entry, writer.entry] },
    });
    ({ server, port } = await listen(app, 0, '127.0.0.1'));
  });
  afterAll(async () => {
    server.closeAllConnections();
    server.close();
    await database.drop();
  });

  const create = (headers: string, body = post) =>
    `POST /api/posts/ HTTP/1.1\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  // Node keeps the first Authorization, Host or Content-Type and joins two Idempotency-Key into
  // one: a proxy in front that reads another would decide on another request. Refused before
  // the token is looked at, either way round.
  test.each([
    [
      'Authorization, the scoped one first',
      `Host: x\r\nAuthorization: Bearer ${writer.token}\r\nAuthorization: Bearer ${reader.token}\r\n`,
    ],
    ['Authorization, the scoped one last', `Host: x\r\nAuthorization: Bearer ${reader.token}\r\nAuthorization: Bearer ${writer.token}\r\n`],
    ['Host', `Host: localhost\r\nhost: evil.example\r\nAuthorization: Bearer ${writer.token}\r\n`],
    ['Content-Type', `Host: x\r\nAuthorization: Bearer ${writer.token}\r\nContent-Type: application/json\r\nContent-Type: text/plain\r\n`],
    ['Idempotency-Key', `Host: x\r\nAuthorization: Bearer ${writer.token}\r\nIdempotency-Key: a\r\nIdempotency-Key: b\r\n`],
  ])('%s given twice: 400, and the connection closes', async (_n, headers) => {
    const withType = headers.includes('Content-Type') ? headers : `${headers}Content-Type: application/json\r\n`;
    const { answers, closed } = await talk(port, create(`${withType}X-Request-Id: twice-1\r\n`));
    expect(answers).toHaveLength(1);
    expectProblem(answers[0], 400);
    expect(answers[0].headers.get('x-request-id')).toBe('twice-1');
    expect(answers[0].headers.get('connection')).toBe('close');
    expect(closed).toBe(true);
  });

  const valid = `Host: x\r\nAuthorization: Bearer ${writer.token}\r\nContent-Type: application/json\r\n`;
  const chunked = (body: string) => `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
  // Framings Node's parser takes but RFC 9112 does not: each is answered, then the connection
  // closes, as the body (if any) cannot be trusted to end where the parser thinks.
  test.each([
    [
      'HTTP/1.0 with Transfer-Encoding: chunked',
      `POST /api/posts/ HTTP/1.0\r\n${valid}Transfer-Encoding: chunked\r\n\r\n${chunked(post)}`,
      400,
    ],
    [
      'Transfer-Encoding: gzip, chunked',
      `POST /api/posts/ HTTP/1.1\r\n${valid}Transfer-Encoding: gzip, chunked\r\n\r\n${chunked(post)}`,
      501,
    ],
    [
      'Transfer-Encoding gzip, then chunked, in two lines',
      `POST /api/posts/ HTTP/1.1\r\n${valid}Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n${chunked(post)}`,
      501,
    ],
    ['a request line of HTTP/2.0', `GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n`, 505],
    ['a request line of HTTP/0.9', `GET /healthz HTTP/0.9\r\nHost: x\r\n\r\n`, 505],
    ['a request line of HTTP/3.0', `GET /healthz HTTP/3.0\r\nHost: x\r\n\r\n`, 505],
  ])('%s: answered, and the connection closes', async (_n, given, want) => {
    const { answers, closed } = await talk(port, given);
    expect(answers.map((a) => a.status)).toEqual([want]);
    expectProblem(answers[0], want);
    expect(answers[0].headers.get('connection')).toBe('close');
    expect(closed).toBe(true);
  });

  // Every valid request is answered, in order, before the bad one's 400; then the connection
  // closes. Only the first was answered: its answer had begun when the parser failed.
  test('pipelined valid requests, then two Content-Length: each answered in order, then 400', async () => {
    const get = (id: string) => `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\n\r\n`;
    const bad = `POST /api/posts/ HTTP/1.1\r\n${valid}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`;
    const { answers, closed } = await talk(port, get('pipe-1') + create(`${valid}X-Request-Id: pipe-2\r\n`) + get('pipe-3') + bad);
    expect(answers.map((a) => [a.status, a.headers.get('x-request-id')])).toEqual([
      [200, 'pipe-1'],
      [204, 'pipe-2'],
      [200, 'pipe-3'],
      [400, expect.any(String)],
    ]);
    expectProblem(answers[3], 400);
    expect(closed).toBe(true);
  });

  // `Expect: 100-continue`: a request the app refuses gets its refusal instead of 100 Continue,
  // and the connection closes (the body it declared never came). Node sent 100 at once, and the
  // client a body of megabytes for nothing.
  const expecting = (headers: string, length = 3_000_000, path = '/api/posts/') =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\n${headers}Expect: 100-continue\r\nContent-Length: ${length}\r\n\r\n`;
  test.each([
    ['no token', expecting('Content-Type: application/json\r\n'), 401],
    ['a token without the scope', expecting(`Authorization: Bearer ${reader.token}\r\nContent-Type: application/json\r\n`), 403],
    ['no such path', expecting(`Authorization: Bearer ${writer.token}\r\nContent-Type: application/json\r\n`, 10, '/api/nothing/'), 404],
    ['a body that is not JSON', expecting(`Authorization: Bearer ${writer.token}\r\nContent-Type: text/plain\r\n`), 415],
    ['a declared length over the limit', expecting(`Authorization: Bearer ${writer.token}\r\nContent-Type: application/json\r\n`), 413],
  ])('Expect: 100-continue with %s: refused before any 100, then close', async (_n, given, want) => {
    const started = Date.now();
    const { answers, closed } = await talk(port, given);
    expect(answers.map((a) => a.status)).toEqual([want]);
    expectProblem(answers[0], want);
    expect(answers[0].headers.get('connection')).toBe('close');
    expect(closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  // Without Expect the client is already sending: its body is read, then the 413, so the client
  // gets the answer instead of a connection cut under its upload.
  test('a declared length over the limit, sent whole without Expect: 413 once it is read', async () => {
    const head = `POST /api/posts/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${writer.token}\r\nContent-Type: application/json\r\n`;
    const body = `{"title":"${'x'.repeat(3_000_000 - 12)}"}`;
    const { answers } = await talk(port, `${head}Content-Length: ${body.length}\r\n\r\n${body}`);
    expect(answers.map((a) => a.status)).toEqual([413]);
    expectProblem(answers[0], 413);
  });

  test('Expect: 100-continue that may go on: 100 Continue, then the body, then 204 on a kept connection', async () => {
    let sent = false;
    const writing = `Authorization: Bearer ${writer.token}\r\nContent-Type: application/json\r\n`;
    const { answers, closed } = await talk(port, expecting(writing, Buffer.byteLength(post)), {
      ms: 1000,
      onData: (received, socket) => {
        if (sent || !received.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) return;
        sent = true;
        socket.write(post);
      },
    });
    expect(answers.map((a) => a.status)).toEqual([100, 204]);
    expect(answers[1].headers.get('connection')).toBe('keep-alive');
    expect(closed).toBe(false);
  });
});
