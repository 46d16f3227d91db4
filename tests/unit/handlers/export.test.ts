import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { streamExport } from '../../../src/handlers/export';

// streamExport against a response that records what it is given, and records that count how
// many of them were read: the walk's cost, which HTTP cannot see.

function fakeResponse(method: string) {
  const headers: Record<string, string> = {};
  const res = Object.assign(new EventEmitter(), {
    req: { method },
    statusCode: 0,
    headers,
    body: '',
    ended: false,
    headersSent: false,
    status(code: number) {
      res.statusCode = code;
      return res;
    },
    set(name: string, value: string) {
      res.headers[name] = value;
      return res;
    },
    write(chunk: string) {
      res.headersSent = true;
      res.body += chunk;
      return true;
    },
    end() {
      res.headersSent = true;
      res.ended = true;
    },
    destroy() {},
  });
  return res;
}

function counted(n: number) {
  const seen = { read: 0, closed: false };
  async function* records() {
    try {
      for (let id = 1; id <= n; id++) {
        await Promise.resolve(); // as a database read would
        seen.read++;
        yield { id, title: `t${id}` };
      }
    } finally {
      seen.closed = true;
    }
  }
  return { seen, records };
}

describe.each(['csv', 'ndjson'] as const)('streamExport (%s)', (format) => {
  const options = (records: () => AsyncIterable<Record<string, unknown>>) => ({ name: 'posts', columns: ['id', 'title'], records });

  test('GET: every record is written, then the body ends', async () => {
    const res = fakeResponse('GET');
    const { seen, records } = counted(5);
    await streamExport(res as unknown as Response, format, options(records));
    expect(res.statusCode).toBe(200);
    expect(res.ended).toBe(true);
    expect(seen.read).toBe(5);
    expect(res.body.trim().split('\n')).toHaveLength(format === 'csv' ? 6 : 5);
  });

  test('HEAD: the headers GET sends, no body, and only the first record read', async () => {
    const head = fakeResponse('HEAD');
    const { seen, records } = counted(1000);
    await streamExport(head as unknown as Response, format, options(records));
    const get = fakeResponse('GET');
    await streamExport(get as unknown as Response, format, options(counted(2).records));
    expect(head.statusCode).toBe(200);
    expect(head.headers).toEqual(get.headers);
    expect(head.ended).toBe(true);
    expect(head.body).toBe('');
    expect(seen.read).toBe(1);
    expect(seen.closed).toBe(true);
  });
});
