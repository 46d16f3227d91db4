import { createServer, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, Server as NetServer } from 'node:net';
import type { Express } from 'express';
import { ConfigError } from '../config';
import { API_SECURITY_HEADERS } from './headers';
import { problemBody } from './problem';
import { requestIdFrom } from './requestContext';

/** Listens, or fails with a ConfigError naming the problem (a port in use, above all). */
export async function listen(app: Express, port: number, host: string): Promise<{ server: Server; port: number }> {
  // Not app.listen: Express 5 calls its callback on errors too, as if listening.
  const server = createServer(app);
  server.on('clientError', answerClientError);
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
  return { server, port: (server.address() as AddressInfo).port };
}

/**
 * Node answers a request it cannot parse (headers over 16 KiB, a malformed request line) with a
 * bare status and no body; the contract wants problem+json for every error, with a request id and
 * the security headers of every other answer, so it is written here. Its headers cannot be read,
 * so the id is always one the service makes.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
  const overflow = err.code === 'HPE_HEADER_OVERFLOW';
  const requestId = requestIdFrom(undefined);
  const problem = overflow
    ? problemBody(431, 'The request line and headers are larger than 16 KiB', undefined, requestId)
    : problemBody(400, 'The request is not valid HTTP', undefined, requestId);
  const body = JSON.stringify(problem);
  const { status, title } = problem;
  const headers = [
    'Content-Type: application/problem+json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    ...API_SECURITY_HEADERS.filter(([, value]) => value !== undefined).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
  ];
  socket.end(`HTTP/1.1 ${status} ${title}\r\n${headers.join('\r\n')}\r\n\r\n${body}`);
}

export interface Drain {
  /** Requests being answered now. */
  inFlight(): number;
  /**
   * Stops accepting connections, lets every request in flight finish, answers everything with
   * `Connection: close`, closes keep-alive connections that stay idle, and resolves true once the
   * last one is closed, or false when `timeoutMs` ran out first (the rest are then cut).
   */
  shutdown(timeoutMs: number): Promise<boolean>;
}

// How long a keep-alive connection may stay idle once shutdown began. A client that is sending
// requests back to back gets its next answer with `Connection: close` within this time; closing
// its connection at once would instead race with a request already on the wire (which the
// server never reads, and the client sees as a reset).
const IDLE_GRACE_MS = 200;

export function drainable(server: Server): Drain {
  const open = new Set<ServerResponse>();
  let closing = false;
  // Before the app sees the request: once closing, every answer says `Connection: close`, so that
  // a keep-alive connection ends with the answer it is carrying instead of waiting to be reused.
  server.prependListener('request', (_req, res: ServerResponse) => {
    open.add(res);
    res.once('close', () => open.delete(res));
    if (closing) res.setHeader('Connection', 'close');
  });
  return {
    inFlight: () => open.size,
    shutdown(timeoutMs) {
      closing = true;
      for (const res of open) if (!res.headersSent) res.setHeader('Connection', 'close');
      return new Promise((resolve) => {
        const idle = setInterval(() => server.closeIdleConnections(), IDLE_GRACE_MS);
        const timer = setTimeout(() => {
          clearInterval(idle);
          server.closeAllConnections();
          resolve(false);
        }, timeoutMs);
        // net's close, not http's: that one also closes idle connections at once (see above).
        NetServer.prototype.close.call(server, () => {
          clearInterval(idle);
          clearTimeout(timer);
          resolve(true);
        });
      });
    },
  };
}
