import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { type AddressInfo, Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { ConfigError } from '../config';
import { holdContinue } from './body';
import { messageRefusal } from './framing';
import { API_SECURITY_HEADERS } from './headers';
import { PROBLEM_TYPES, type ProblemKind, problemBody } from '../problems';
import { requestIdFrom } from './requestContext';

/**
 * Listens, or fails with a ConfigError naming the problem (a port in use, above all). `options` are
 * node:http's (the service keeps Node's defaults; tests shorten its timeouts). `drain` stops it.
 */
export async function listen(
  app: Express,
  port: number,
  host: string,
  options: ServerOptions = {},
): Promise<{ server: Server; port: number; drain: Drain }> {
  // Not app.listen: Express 5 calls its callback on errors too, as if listening. Node answers an
  // HTTP/1.1 request without Host with a bare 400 of its own: the app answers it (hostRequired).
  const server = createServer({ requireHostHeader: false, ...options });
  const { drain, open } = drainable(server);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // Refused before the app: no route, token or rate limit may decide on a request that a proxy
    // in front could have read otherwise.
    const refusal = messageRefusal(req.httpVersion, req.rawHeaders);
    if (refusal) return answerWith(res, refusal.kind, refusal.detail, clientRequestId(req));
    app(req, res);
  });
  // Node would answer `Expect: 100-continue` with 100 Continue at once; the app sends it only once
  // it is about to read the body (body.ts), so a refused client never sends the body.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    holdContinue(req);
    server.emit('request', req, res);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => answerClientError(err, socket, open));
  // An `Expect` other than 100-continue: Node's own answer is a bare 417; this one is a problem.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    answerWith(res, 'expectation-failed', 'The server meets no expectation but 100-continue', clientRequestId(req));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new ConfigError(
          err.code === 'EADDRINUSE' ? `port ${port} on ${host} is already in use` : `cannot listen on ${host}:${port}: ${err.message}`,
        ),
      ),
    );
    server.listen(port, host, resolve);
  });
  return { server, port: (server.address() as AddressInfo).port, drain };
}

/** The client's X-Request-Id when it is sane, else one of the service's own. */
function clientRequestId(req: IncomingMessage): string {
  const header = req.headers['x-request-id'];
  return requestIdFrom(typeof header === 'string' ? header : undefined);
}

// Node's own answers, by the code of the parser's or the server's error; any other is 400.
const CLIENT_ERRORS = new Map<string | undefined, [kind: ProblemKind, detail: string]>([
  ['HPE_HEADER_OVERFLOW', ['headers-too-large', 'The request line and headers are larger than 16 KiB']],
  // `HTTP/1.2`, `HTTP/3.0`: the parser knows no such version (HTTP/2.0 parses: messageRefusal).
  ['HPE_INVALID_VERSION', ['http-version', 'The server speaks HTTP/1.1 and HTTP/1.0 only']],
  [
    'ERR_HTTP_REQUEST_TIMEOUT',
    ['request-timeout', 'The request did not arrive in time: the server stopped waiting for its headers or its body'],
  ],
  // The client ended its side of the connection (FIN) before the request did.
  [
    'HPE_INVALID_EOF_STATE',
    ['incomplete-request', 'The request is incomplete: the client closed its side of the connection before its end'],
  ],
]);

/**
 * Errors after which a request whose headers arrived will never get the rest of its body: the app
 * answers it (answerWith). Left waiting, a body cut by the client's FIN kept its request open
 * until shutdown, past every timeout (Node's checks skip a connection it has seen end).
 */
const BODY_NEVER_COMES = new Set(['ERR_HTTP_REQUEST_TIMEOUT', 'HPE_INVALID_EOF_STATE']);

/** A body whose framing does not parse (a chunk size that is no hex number, a chunk without CRLF). */
const BROKEN_BODY: [ProblemKind, string] = ['bad-framing', 'The request body is not valid HTTP: its chunked encoding does not parse'];

/**
 * Answers what Node cannot parse or that came too late as problem+json (Node writes a bare status),
 * after every answer a pipelining client still awaits, each whole and in order; then the
 * connection closes. Node's own handler cut the connection when one of those had begun.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex, open: ReadonlySet<ServerResponse>): void {
  if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
  // A failed parser may report again as more bytes come; the first report is answered.
  if (answered.has(socket)) return;
  answered.add(socket);
  // This connection's unfinished answers, in the order of their requests. Rare: a walk of the
  // open answers costs nothing on the request path.
  const answers = [...open].filter((res) => res.req.socket === socket && !res.writableFinished);
  const [kind, detail] = CLIENT_ERRORS.get(err.code) ?? (['bad-framing', 'The request is not valid HTTP'] as const);
  // Headers arrived but the body did not (or broke: a failed parser is skipped by Node's timeouts,
  // so it would wait for ever): the app answers it, so client, log and metrics share one id. The
  // parser stops at that request, so it is the last.
  const late = answers.find((res) => !res.req.complete);
  if (late && !late.headersSent) {
    const [lateKind, lateDetail] = BODY_NEVER_COMES.has(err.code ?? '') ? [kind, detail] : BROKEN_BODY;
    return answerWith(late, lateKind, lateDetail, String(late.getHeader('X-Request-Id') ?? requestIdFrom(undefined)));
  }
  const { status, body, headers } = problemAnswer(kind, detail, requestIdFrom(undefined));
  const lines = headers.map(([name, value]) => `${name}: ${value}\r\n`).join('');
  const answer = () => {
    if (!socket.writable) return void socket.destroy();
    // A late request the app has answered already (without its body) gets no second answer.
    socket.end(late ? undefined : `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines}\r\n${body}`);
  };
  if (!answers.length) return answer();
  // Once every answer before it has closed: finished, or cut with the connection.
  let left = answers.length;
  for (const res of answers) res.once('close', () => --left === 0 && answer());
}

/** Connections whose client error is answered or waits to be. */
const answered = new WeakSet<Duplex>();

/** Answers a request the app has not answered (a late body, an unmet expectation) with a problem. */
function answerWith(res: ServerResponse, kind: ProblemKind, detail: string, requestId: string): void {
  const { status, body, headers } = problemAnswer(kind, detail, requestId);
  res.writeHead(status, Object.fromEntries(headers));
  res.end(body);
}

/** A problem+json answer's body and headers, the security headers of every other answer among them. */
function problemAnswer(kind: ProblemKind, detail: string, requestId: string) {
  const problem = problemBody(kind, detail, undefined, requestId);
  const body = JSON.stringify(problem);
  const headers: [string, string][] = [
    ['Content-Type', 'application/problem+json'],
    ['Content-Length', String(Buffer.byteLength(body))],
    ['X-Request-Id', requestId],
    ...API_SECURITY_HEADERS.filter((h): h is [string, string] => h[1] !== undefined),
    ['Connection', 'close'],
  ];
  return { status: PROBLEM_TYPES[kind].status, body, headers };
}

export interface Drain {
  /** Requests being answered now. */
  inFlight(): number;
  /**
   * Stops accepting connections, lets every request in flight finish, answers everything with
   * `Connection: close`, closes connections that carry no request (idle, or with half a request)
   * once they have stayed so for IDLE_GRACE_MS, and resolves true once the last one is closed, or
   * false when `timeoutMs` ran out first (the rest are then cut).
   */
  shutdown(timeoutMs: number): Promise<boolean>;
}

// How long a connection without a request in flight may stay open once shutdown began. A client
// that is sending requests back to back gets its next answer with `Connection: close` within this
// time; closing its connection at once would instead race with a request already on the wire
// (which the server never reads, and the client sees as a reset).
const IDLE_GRACE_MS = 200;

/**
 * The server's drain, and the answers not yet finished, which shutdown waits for and
 * answerClientError must not write into.
 */
function drainable(server: Server): { drain: Drain; open: ReadonlySet<ServerResponse> } {
  const open = new Set<ServerResponse>();
  const connections = new Set<Socket>();
  // Once closing: when each connection's last answer ended, which starts its grace again.
  const answeredAt = new WeakMap<Duplex, number>();
  let closing = false;
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  // Before the app sees the request: once closing, every answer says `Connection: close`, so
  // that a keep-alive connection ends with the answer it is carrying.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    open.add(res);
    res.once('close', () => {
      open.delete(res);
      if (closing) answeredAt.set(req.socket, Date.now());
    });
    if (closing) res.setHeader('Connection', 'close');
  });
  const drain: Drain = {
    inFlight: () => open.size,
    shutdown(timeoutMs) {
      closing = true;
      const began = Date.now();
      for (const res of open) if (!res.headersSent) res.setHeader('Connection', 'close');
      // Node's closeIdleConnections skips a connection that has sent nothing or half its headers
      // (its parser counts it as active), which held shutdown until the timeout.
      const closeQuiet = () => {
        const busy = new Set([...open].map((res) => res.req.socket));
        const now = Date.now();
        for (const socket of connections) {
          if (!busy.has(socket) && now - Math.max(began, answeredAt.get(socket) ?? 0) >= IDLE_GRACE_MS) socket.destroy();
        }
      };
      return new Promise((resolve) => {
        const quiet = setInterval(closeQuiet, IDLE_GRACE_MS / 4);
        const timer = setTimeout(() => {
          clearInterval(quiet);
          for (const socket of connections) socket.destroy();
          resolve(false);
        }, timeoutMs);
        // net's close, not http's: that one also closes idle connections at once (see above).
        NetServer.prototype.close.call(server, () => {
          clearInterval(quiet);
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
  };
  return { drain, open };
}
