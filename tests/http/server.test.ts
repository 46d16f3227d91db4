import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { listen } from '../../src/http/server';

// Requests that Node itself refuses, before express sees them, still get problem+json.
test.each([
  ['headers over 16 KiB', { given: { headers: { 'x-big': 'a'.repeat(20_000) }, path: '/' }, want: 431 }],
  ['a URL over 16 KiB', { given: { headers: {}, path: `/api/posts/?cursor=${'a'.repeat(20_000)}` }, want: 431 }],
])('%s', async (_n, { given, want }) => {
  const { server } = await listen(express(), 0, '127.0.0.1');
  try {
    const port = (server.address() as AddressInfo).port;
    const res = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: given.path, headers: given.headers }, (r) => {
        let body = '';
        r.on('data', (c) => (body += c));
        r.on('end', () => resolve({ status: r.statusCode!, type: String(r.headers['content-type']), body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(res.status).toBe(want);
    expect(res.type).toBe('application/problem+json');
    expect(JSON.parse(res.body)).toMatchObject({ type: 'about:blank', status: want, title: 'Request Header Fields Too Large' });
  } finally {
    server.close();
  }
});
