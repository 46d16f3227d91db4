import { connect, type AddressInfo } from 'node:net';
import express from 'express';
import { listen } from '../../src/http/server';

// Requests that Node itself refuses, before express sees them, still get problem+json, with a
// request id and the security headers of every other answer.
const big = 'a'.repeat(20_000);
test.each([
  ['headers over 16 KiB', { given: `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`, want: 431 }],
  ['a URL over 16 KiB', { given: `GET /api/posts/?cursor=${big} HTTP/1.1\r\nHost: x\r\n\r\n`, want: 431 }],
  ['an unknown method', { given: 'FOO /api/posts/ HTTP/1.1\r\nHost: x\r\nX-Request-Id: mine-1\r\n\r\n', want: 400 }],
  ['a request line that is no HTTP', { given: 'hello there\r\n\r\n', want: 400 }],
])('%s', async (_n, { given, want }) => {
  const { server } = await listen(express(), 0, '127.0.0.1');
  try {
    const port = (server.address() as AddressInfo).port;
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.end(given));
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    const [statusLine, ...lines] = head.split('\r\n');
    const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const problem = JSON.parse(body);
    expect(statusLine).toMatch(new RegExp(`^HTTP/1.1 ${want} `));
    expect(headers.get('content-type')).toBe('application/problem+json');
    expect(problem).toEqual({
      type: 'about:blank',
      status: want,
      title: expect.any(String),
      detail: expect.any(String),
      request_id: expect.any(String),
    });
    // The service's own id: the request's headers could not be read.
    expect(headers.get('x-request-id')).toBe(problem.request_id);
    expect(problem.request_id).not.toBe('mine-1');
    expect(headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(headers.get('x-content-type-options')).toBe('nosniff');
  } finally {
    server.close();
  }
});
