import type { Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createApp } from '../../../src/app';
import { openDb, type Db } from '../../../src/db/connection';
import { PROBLEM_TYPES, type ProblemKind } from '../../../src/problems';
import { startTestApp, type TestApp, type TestResponse } from '../../helpers/app';
import { assertMatchesContract } from '../../helpers/contract';
import { fixtures, type Fixture } from '../../helpers/fixtures';

// The HTTP layer's answers that are not a record operation's own: redirects, unknown paths and
// ids, methods, media types, body limits, malformed bodies, an unreachable or broken database,
// and HEAD. Every response also goes through the spec check of the test helpers.

/** The kinds of problem each status stands for in these tests. */
const KINDS: Record<number, ProblemKind[]> = {
  400: ['validation', 'malformed-body'],
  404: ['route-not-found', 'not-found'],
  405: ['method-not-allowed'],
  413: ['body-too-large'],
  415: ['unsupported-media-type'],
  500: ['internal'],
  503: ['database-unavailable', 'database-timeout'],
};

/** An RFC 9457 problem for this status, of one of its kinds (the helper checks the schema). */
function expectProblem(res: TestResponse, status: number): void {
  expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({
    status,
    type: expect.stringMatching(/^application\/problem\+json/),
  });
  const kind = KINDS[status].find((k) => res.body.type === `/problems/${k}`);
  expect([res.body.type, kind]).toEqual([res.body.type, expect.any(String)]);
  expect(res.body).toEqual(expect.objectContaining({ title: PROBLEM_TYPES[kind!].title, status, detail: expect.any(String) }));
  expect(res.body.detail.length).toBeGreaterThan(0);
}

interface RawOptions {
  headers?: Record<string, string>;
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
  redirect?: 'follow' | 'manual';
}

/**
 * Requests that the helper cannot send as is (no Content-Type at all, a streamed body, a client
 * that follows redirects), still checked against the spec.
 */
async function rawRequest(url: string, method: string, path: string, opts: RawOptions = {}): Promise<TestResponse> {
  const init: RequestInit & { duplex?: 'half' } = { method, headers: opts.headers, body: opts.body, redirect: opts.redirect ?? 'manual' };
  if (opts.body instanceof ReadableStream) init.duplex = 'half';
  const res = await fetch(url + path, init);
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  const body = type.includes('json') && text ? JSON.parse(text) : text;
  const finalPath = new URL(res.url || url + path).pathname;
  await assertMatchesContract({ method, path: finalPath, status: res.status, headers: res.headers, body });
  return { status: res.status, headers: res.headers, body };
}

/** A body of exactly `bytes` bytes: valid JSON padded with white space, which JSON allows. */
function padded(value: unknown, bytes: number): string {
  const json = JSON.stringify(value);
  const pad = bytes - Buffer.byteLength(json);
  if (pad < 0) throw new Error(`body is already ${Buffer.byteLength(json)} bytes`);
  return json + ' '.repeat(pad);
}

/** Sorted, so that Allow is compared as the set of methods it names (its order means nothing). */
function allowSet(res: TestResponse): string[] {
  return (res.headers.get('allow') ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean)
    .sort();
}

const RECORD_METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'PUT'];
const LIST_METHODS = ['GET', 'HEAD', 'POST'];

const perCollection = fixtures.map((f) => [f.name, f] as const);

describe('with the default 1 MiB body limit', () => {
  let app: TestApp;
  let seq = 0;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  const count = async (name: string) => (await app.request('GET', `/api/${name}/`)).body.count as number;
  const create = async (f: Fixture) => {
    const res = await app.request('POST', `/api/${f.name}/`, { body: f.valid(++seq) });
    expect(res.status).toBe(201);
    return res.body as { id: number } & Record<string, unknown>;
  };

  describe.each(perCollection)('%s: 308 to the slashed path', (name, f) => {
    const rows: [string, { given: { method: string; path: string; body?: unknown }; want: { location: string } }][] = [
      ['GET of the list', { given: { method: 'GET', path: `/api/${name}` }, want: { location: `/api/${name}/` } }],
      ['HEAD of the list', { given: { method: 'HEAD', path: `/api/${name}` }, want: { location: `/api/${name}/` } }],
      [
        'the query string is kept',
        { given: { method: 'GET', path: `/api/${name}?page=2&search=x` }, want: { location: `/api/${name}/?page=2&search=x` } },
      ],
      [
        'an encoded query is kept byte for byte',
        {
          given: { method: 'GET', path: `/api/${name}?search=%C3%A9cole%20x&page_size=5` },
          want: { location: `/api/${name}/?search=%C3%A9cole%20x&page_size=5` },
        },
      ],
      ['POST to the list', { given: { method: 'POST', path: `/api/${name}`, body: f.valid(900) }, want: { location: `/api/${name}/` } }],
      ['GET of a record', { given: { method: 'GET', path: `/api/${name}/1` }, want: { location: `/api/${name}/1/` } }],
      ['PUT of a record', { given: { method: 'PUT', path: `/api/${name}/1`, body: f.valid(901) }, want: { location: `/api/${name}/1/` } }],
      [
        'PATCH of a record',
        { given: { method: 'PATCH', path: `/api/${name}/1?x=1`, body: f.patch }, want: { location: `/api/${name}/1/?x=1` } },
      ],
      ['DELETE of a record', { given: { method: 'DELETE', path: `/api/${name}/1` }, want: { location: `/api/${name}/1/` } }],
    ];
    test.each(rows)('%s', async (_, { given, want }) => {
      const before = await count(name);
      const res = await app.request(given.method, given.path, { body: given.body });
      expect({ status: res.status, location: res.headers.get('location') }).toEqual({ status: 308, location: want.location });
      // A redirect is not the operation: the unslashed request itself must change nothing.
      expect(await count(name)).toBe(before);
    });

    test('a client that follows the 308 keeps method and body, and the record is created', async () => {
      const res = await rawRequest(app.url, 'POST', `/api/${name}`, {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(f.valid(902)),
        redirect: 'follow',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(expect.objectContaining(f.valid(902)));
      expect(res.headers.get('location')).toBe(`/api/${name}/${res.body.id}/`);
    });
  });

  describe('404 for paths that no operation has', () => {
    const rows: [string, { given: { method: string; path: string }; want: { status: 404 } }][] = [
      ['the root', { given: { method: 'GET', path: '/' }, want: { status: 404 } }],
      ['/api/', { given: { method: 'GET', path: '/api/' }, want: { status: 404 } }],
      ['an unknown collection', { given: { method: 'GET', path: '/api/nope/' }, want: { status: 404 } }],
      // Not a 308: the slashed path would not exist either.
      ['an unknown collection without slash', { given: { method: 'GET', path: '/api/nope' }, want: { status: 404 } }],
      ['POST to an unknown collection', { given: { method: 'POST', path: '/api/nope/' }, want: { status: 404 } }],
      ['below a record', { given: { method: 'GET', path: '/api/posts/1/extra/' }, want: { status: 404 } }],
      ['below a record without slash', { given: { method: 'GET', path: '/api/posts/1/extra' }, want: { status: 404 } }],
      ['a doubled slash', { given: { method: 'GET', path: '/api//posts/' }, want: { status: 404 } }],
      ['a collection name in another case', { given: { method: 'GET', path: '/api/Posts/' }, want: { status: 404 } }],
    ];
    test.each(rows)('%s', async (_, { given, want }) => {
      const res = await app.request(given.method, given.path, given.method === 'POST' ? { body: {} } : {});
      expectProblem(res, want.status);
    });
  });

  describe.each(perCollection)('%s: 404 for an id that is not a record', (name, f) => {
    let deletedId: number;
    let keptId: number;
    beforeAll(async () => {
      keptId = (await create(f)).id;
      deletedId = (await create(f)).id;
      expect((await app.request('DELETE', `/api/${name}/${deletedId}/`)).status).toBe(204);
    });

    const ids: [string, { given: () => string; want: { status: 404 } }][] = [
      ['zero', { given: () => '0', want: { status: 404 } }],
      ['negative', { given: () => '-1', want: { status: 404 } }],
      ['letters', { given: () => 'abc', want: { status: 404 } }],
      ['a fraction', { given: () => '1.5', want: { status: 404 } }],
      ['hexadecimal', { given: () => '0x10', want: { status: 404 } }],
      ['an exponent', { given: () => '1e1', want: { status: 404 } }],
      ['an encoded space', { given: () => '%20', want: { status: 404 } }],
      ['a leading space', { given: () => '%201', want: { status: 404 } }],
      ['2^53, past the exact JSON integers', { given: () => '9007199254740992', want: { status: 404 } }],
      ['past 64 bits', { given: () => '99999999999999999999', want: { status: 404 } }],
      ['2^53 - 1, valid but unused', { given: () => '9007199254740991', want: { status: 404 } }],
      ['a deleted record', { given: () => String(deletedId), want: { status: 404 } }],
      // Non-canonical spellings of a record's id: one resource, one URL (it answered the record).
      ['a leading zero on a record id', { given: () => `0${keptId}`, want: { status: 404 } }],
      ['leading zeros on a record id', { given: () => `000${keptId}`, want: { status: 404 } }],
      ['a plus sign on a record id', { given: () => `%2B${keptId}`, want: { status: 404 } }],
      ['a record id percent-encoded', { given: () => [...String(keptId)].map((d) => `%3${d}`).join(''), want: { status: 404 } }],
      [
        'a digit of a record id percent-encoded',
        { given: () => `${String(keptId).slice(0, -1)}%3${String(keptId).at(-1)}`, want: { status: 404 } },
      ],
    ];
    const methods: [string, (f: Fixture) => unknown][] = [
      ['GET', () => undefined],
      ['PUT', (fx) => fx.valid(800)],
      ['PATCH', (fx) => fx.patch],
      ['DELETE', () => undefined],
    ];
    describe.each(methods)('%s', (method, body) => {
      test.each(ids)('%s', async (_, { given, want }) => {
        const before = await count(name);
        const res = await app.request(method, `/api/${name}/${given()}/`, { body: body(f) });
        expectProblem(res, want.status);
        expect(res.body.errors).toBeUndefined();
        expect(await count(name)).toBe(before);
      });
    });
  });

  describe.each(perCollection)('%s: 405 with Allow', (name, f) => {
    const rows: [
      string,
      { given: { method: string; path: string; headers?: Record<string, string>; body?: unknown }; want: { allow: string[] } },
    ][] = [
      ['POST to a record', { given: { method: 'POST', path: `/api/${name}/1/`, body: f.valid(700) }, want: { allow: RECORD_METHODS } }],
      ['DELETE of the list', { given: { method: 'DELETE', path: `/api/${name}/` }, want: { allow: LIST_METHODS } }],
      ['PUT to the list', { given: { method: 'PUT', path: `/api/${name}/`, body: f.valid(701) }, want: { allow: LIST_METHODS } }],
      ['PATCH to the list', { given: { method: 'PATCH', path: `/api/${name}/`, body: f.patch }, want: { allow: LIST_METHODS } }],
      ['OPTIONS of the list', { given: { method: 'OPTIONS', path: `/api/${name}/` }, want: { allow: LIST_METHODS } }],
      // The method is what is wrong, whatever the body is.
      [
        'POST of text to a record',
        {
          given: { method: 'POST', path: `/api/${name}/1/`, headers: { 'content-type': 'text/plain' }, body: 'x' },
          want: { allow: RECORD_METHODS },
        },
      ],
    ];
    test.each(rows)('%s', async (_, { given, want }) => {
      const existing = await create(f);
      const before = await count(name);
      const res =
        typeof given.body === 'string'
          ? await app.request(given.method, given.path, { raw: given.body, headers: given.headers })
          : await app.request(given.method, given.path, { body: given.body, headers: given.headers });
      expectProblem(res, 405);
      expect(allowSet(res)).toEqual([...want.allow].sort());
      expect(await count(name)).toBe(before);
      expect((await app.request('GET', `/api/${name}/${existing.id}/`)).body).toEqual(existing);
    });
  });

  describe.each(perCollection)('%s: 415 unless the body is UTF-8 application/json', (name, f) => {
    // A record of its own per test, so that one wrongly accepted body fails one test only.
    let existing: Record<string, unknown> & { id: number };
    beforeEach(async () => {
      existing = await create(f);
    });

    const types: [string, { given: string | undefined; want: { status: 415 } }][] = [
      ['text/plain', { given: 'text/plain', want: { status: 415 } }],
      ['a form', { given: 'application/x-www-form-urlencoded', want: { status: 415 } }],
      ['multipart', { given: 'multipart/form-data; boundary=x', want: { status: 415 } }],
      ['text/json', { given: 'text/json', want: { status: 415 } }],
      ['merge-patch', { given: 'application/merge-patch+json', want: { status: 415 } }],
      ['no Content-Type at all', { given: undefined, want: { status: 415 } }],
      ['charset latin1', { given: 'application/json; charset=latin1', want: { status: 415 } }],
      ['charset iso-8859-1', { given: 'application/json; charset=iso-8859-1', want: { status: 415 } }],
      ['charset utf-16', { given: 'application/json; charset=utf-16', want: { status: 415 } }],
      ['charset utf-16le', { given: 'application/json; charset=utf-16le', want: { status: 415 } }],
    ];
    const operations: [string, { method: string; path: () => string; body: () => unknown }][] = [
      ['POST', { method: 'POST', path: () => `/api/${name}/`, body: () => f.valid(600) }],
      ['PUT', { method: 'PUT', path: () => `/api/${name}/${existing.id}/`, body: () => f.valid(601) }],
      ['PATCH', { method: 'PATCH', path: () => `/api/${name}/${existing.id}/`, body: () => f.patch }],
    ];
    describe.each(operations)('%s', (_, op) => {
      test.each(types)('%s', async (__, { given, want }) => {
        const before = await count(name);
        const json = JSON.stringify(op.body());
        // A UTF-16 label gets a body that really is UTF-16, so only the charset is wrong.
        const bytes = given?.includes('utf-16') ? Buffer.from(json, 'utf16le') : Buffer.from(json);
        const res = await rawRequest(app.url, op.method, op.path(), {
          headers: given === undefined ? {} : { 'content-type': given },
          body: new Uint8Array(bytes),
        });
        expectProblem(res, want.status);
        expect(await count(name)).toBe(before);
        expect((await app.request('GET', `/api/${name}/${existing.id}/`)).body).toEqual(existing);
      });
    });

    const accepted: [string, { given: string; want: { status: 201 } }][] = [
      ['application/json', { given: 'application/json', want: { status: 201 } }],
      ['charset utf-8', { given: 'application/json; charset=utf-8', want: { status: 201 } }],
      ['upper case', { given: 'Application/JSON; charset=UTF-8', want: { status: 201 } }],
      ['charset utf8, an alias of utf-8', { given: 'application/json; charset=utf8', want: { status: 201 } }],
      ['charset UTF8, quoted', { given: 'application/json; charset="UTF8"', want: { status: 201 } }],
    ];
    test.each(accepted)('accepts %s', async (_, { given, want }) => {
      const res = await app.request('POST', `/api/${name}/`, { body: f.valid(602 + seq++), headers: { 'content-type': given } });
      expect(res.status).toBe(want.status);
      expect(res.body.id).toEqual(expect.any(Number));
    });
  });

  describe.each(perCollection)('%s: 413 over the default limit', (name, f) => {
    const limit = 1024 * 1024;
    test.each([
      ['one byte over 1 MiB', { given: limit + 1, want: { status: 413 } }],
      ['2 MiB', { given: 2 * limit, want: { status: 413 } }],
      ['50 MiB', { given: 50 * limit, want: { status: 413 } }],
    ] as const)('%s', async (_, { given, want }) => {
      const before = await count(name);
      const res = await app.request('POST', `/api/${name}/`, { raw: padded(f.valid(500), given) });
      expectProblem(res, want.status);
      expect(await count(name)).toBe(before);
    });

    // A gzip bomb: 64 KiB on the wire that inflates far past the limit is refused as too large,
    // without the whole of it being inflated.
    test('gzip that inflates past the limit', async () => {
      const before = await count(name);
      const res = await app.request('POST', `/api/${name}/`, {
        raw: gzipSync(Buffer.from(padded(f.valid(502), 64 * limit))),
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      });
      expectProblem(res, 413);
      expect(await count(name)).toBe(before);
    });

    test('exactly 1 MiB of valid JSON is accepted', async () => {
      const res = await app.request('POST', `/api/${name}/`, { raw: padded(f.valid(501), limit) });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(expect.objectContaining(f.valid(501)));
    });
  });

  test('a post whose content is 1,000,000 characters is accepted and stored whole', async () => {
    const content = 'abcdefghij'.repeat(100_000);
    const res = await app.request('POST', '/api/posts/', { body: { title: 'Long', content, author: 'ada' } });
    expect(res.status).toBe(201);
    expect(res.body.content).toBe(content);
    const got = await app.request('GET', `/api/posts/${res.body.id}/`);
    expect(got.body.content.length).toBe(1_000_000);
    expect(got.body.content).toBe(content);
  });

  describe.each(perCollection)('%s: 400 for a compressed body that does not decompress', (name, f) => {
    const valid = Buffer.from(JSON.stringify(f.valid(9101)));
    const bodies: [string, { encoding: string; given: Buffer }][] = [
      ['gzip, not gzipped', { encoding: 'gzip', given: valid }],
      ['gzip, cut short', { encoding: 'gzip', given: gzipSync(valid).subarray(0, 20) }],
      ['deflate, not deflated', { encoding: 'deflate', given: valid }],
      ['br, not compressed', { encoding: 'br', given: valid }],
    ];
    test.each(bodies)('%s', async (_, { encoding, given }) => {
      const before = await count(name);
      const res = await app.request('POST', `/api/${name}/`, {
        raw: given,
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': encoding },
      });
      expectProblem(res, 400);
      expect(res.body.detail).toMatch(/Content-Encoding/);
      expect(await count(name)).toBe(before);
    });
    test('gzip that decompresses is read', async () => {
      const res = await app.request('POST', `/api/${name}/`, {
        raw: gzipSync(valid),
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      });
      expect(res.status).toBe(201);
    });
  });

  describe.each(perCollection)('%s: 400 for a body that is not JSON', (name, f) => {
    let existing: Record<string, unknown> & { id: number };
    beforeEach(async () => {
      existing = await create(f);
    });

    const valid = JSON.stringify(f.valid(400));
    const bodies: [string, { given: string; want: { status: 400 } }][] = [
      ['truncated after the brace', { given: '{', want: { status: 400 } }],
      ['truncated in a string', { given: valid.slice(0, valid.length - 5), want: { status: 400 } }],
      ['truncated before the last brace', { given: valid.slice(0, -1), want: { status: 400 } }],
      ['a trailing comma', { given: `${valid.slice(0, -1)},}`, want: { status: 400 } }],
      ['single quotes', { given: valid.replace(/"/g, "'"), want: { status: 400 } }],
      ['bare words', { given: 'not json', want: { status: 400 } }],
      ['two documents', { given: `${valid}${valid}`, want: { status: 400 } }],
      ['an empty body', { given: '', want: { status: 400 } }],
      ['only white space', { given: '   \n', want: { status: 400 } }],
      ['null', { given: 'null', want: { status: 400 } }],
      ['a string', { given: '"text"', want: { status: 400 } }],
      ['a number', { given: '42', want: { status: 400 } }],
      ['an array', { given: `[${valid}]`, want: { status: 400 } }],
      // Deep nesting stays under the size limit; parsing or checking it must not exhaust the stack.
      ['arrays nested 200,000 deep', { given: `${'['.repeat(200_000)}${']'.repeat(200_000)}`, want: { status: 400 } }],
      ['a field nested 200,000 deep', { given: `{"x":${'['.repeat(200_000)}${']'.repeat(200_000)}}`, want: { status: 400 } }],
    ];
    const operations: [string, { method: string; path: () => string }][] = [
      ['POST', { method: 'POST', path: () => `/api/${name}/` }],
      ['PUT', { method: 'PUT', path: () => `/api/${name}/${existing.id}/` }],
      ['PATCH', { method: 'PATCH', path: () => `/api/${name}/${existing.id}/` }],
    ];
    describe.each(operations)('%s', (_, op) => {
      test.each(bodies)('%s', async (__, { given, want }) => {
        const before = await count(name);
        const res = await app.request(op.method, op.path(), { raw: given });
        expectProblem(res, want.status);
        expect(await count(name)).toBe(before);
        expect((await app.request('GET', `/api/${name}/${existing.id}/`)).body).toEqual(existing);
      });
    });
  });

  describe.each(perCollection)('%s: 400 for JSON that two readers could read apart', (name, f) => {
    let existing: Record<string, unknown> & { id: number };
    beforeEach(async () => {
      existing = await create(f);
    });
    const field = f.searchFields[0];
    const valid = JSON.stringify(f.valid(410));
    const withByte = (bytes: number[]) =>
      Buffer.concat([
        Buffer.from(`{"${field}":"a`),
        Buffer.from(bytes),
        Buffer.from(`b",${valid.slice(1).replace(`"${field}":`, '"_x":')}`),
      ]);
    // Bytes that are not UTF-8 were stored as U+FFFD (a 201); a key given twice kept its last
    // value, where a proxy that reads the first saw another body.
    const bodies: [string, { given: () => Buffer; want: { detail: RegExp; errors: unknown[] } }][] = [
      [
        'a byte 0xFF',
        {
          given: () =>
            Buffer.concat([
              Buffer.from(`{"${field}":"`),
              Buffer.from([0xff]),
              Buffer.from(valid.slice(valid.indexOf(`"${field}":"`) + field.length + 4)),
            ]),
          want: { detail: /not valid UTF-8/, errors: [{ field: 'body', message: 'must be UTF-8' }] },
        },
      ],
      [
        'an overlong encoding of /',
        { given: () => withByte([0xc0, 0xaf]), want: { detail: /not valid UTF-8/, errors: [{ field: 'body', message: 'must be UTF-8' }] } },
      ],
      [
        'a surrogate encoded in UTF-8',
        {
          given: () => withByte([0xed, 0xa0, 0x80]),
          want: { detail: /not valid UTF-8/, errors: [{ field: 'body', message: 'must be UTF-8' }] },
        },
      ],
      [
        'a sequence cut short',
        { given: () => withByte([0xe2, 0x82]), want: { detail: /not valid UTF-8/, errors: [{ field: 'body', message: 'must be UTF-8' }] } },
      ],
      [
        'a key twice',
        {
          given: () => Buffer.from(`{"${field}":"first",${valid.slice(1)}`),
          want: { detail: new RegExp(`key "${field}" more than once`), errors: [{ field, message: 'must appear once' }] },
        },
      ],
      [
        'a key twice, once spelled with an escape',
        {
          given: () =>
            Buffer.from(
              `{"${field.slice(0, -1)}\\u${field
                .charCodeAt(field.length - 1)
                .toString(16)
                .padStart(4, '0')}":"first",${valid.slice(1)}`,
            ),
          want: { detail: new RegExp(`key "${field}" more than once`), errors: [{ field, message: 'must appear once' }] },
        },
      ],
    ];
    const operations: [string, { method: string; path: () => string }][] = [
      ['POST', { method: 'POST', path: () => `/api/${name}/` }],
      ['PUT', { method: 'PUT', path: () => `/api/${name}/${existing.id}/` }],
      ['PATCH', { method: 'PATCH', path: () => `/api/${name}/${existing.id}/` }],
    ];
    describe.each(operations)('%s', (_, op) => {
      test.each(bodies)('%s', async (__, { given, want }) => {
        const before = await count(name);
        const body = given();
        // Each body would be accepted but for the one defect under test.
        expect(() => JSON.parse(body.toString('utf8'))).not.toThrow();
        const res = await app.request(op.method, op.path(), { raw: body });
        expectProblem(res, 400);
        expect(res.body.detail).toMatch(want.detail);
        expect(res.body.errors).toEqual(want.errors);
        expect(await count(name)).toBe(before);
        expect((await app.request('GET', `/api/${name}/${existing.id}/`)).body).toEqual(existing);
      });
    });
    test('the same bytes gzipped: not UTF-8 is a 400 too', async () => {
      const before = await count(name);
      const res = await app.request('POST', `/api/${name}/`, {
        raw: gzipSync(withByte([0xff])),
        headers: { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      });
      expectProblem(res, 400);
      expect(res.body.detail).toMatch(/not valid UTF-8/);
      expect(await count(name)).toBe(before);
    });
  });

  describe.each(perCollection)('%s: HEAD answers as GET, without a body', (name, f) => {
    let id: number;
    beforeAll(async () => {
      id = (await create(f)).id;
    });
    const rows: [string, { given: () => string; want: { status: number } }][] = [
      ['the list', { given: () => `/api/${name}/`, want: { status: 200 } }],
      ['a searched list', { given: () => `/api/${name}/?search=x&page_size=5`, want: { status: 200 } }],
      ['a record', { given: () => `/api/${name}/${id}/`, want: { status: 200 } }],
      ['a missing record', { given: () => `/api/${name}/9007199254740991/`, want: { status: 404 } }],
      ['a bad id', { given: () => `/api/${name}/abc/`, want: { status: 404 } }],
      ['a page past the end', { given: () => `/api/${name}/?page=1000`, want: { status: 404 } }],
      ['a bad page', { given: () => `/api/${name}/?page=0`, want: { status: 400 } }],
    ];
    test.each(rows)('%s', async (_, { given, want }) => {
      const get = await app.request('GET', given());
      const head = await app.request('HEAD', given());
      expect({ get: get.status, head: head.status }).toEqual({ get: want.status, head: want.status });
      expect(head.body).toBe('');
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    });
  });
});

describe('with a 1 KiB body limit', () => {
  const limit = 1024;
  let app: TestApp;
  let seq = 0;
  beforeAll(async () => {
    app = await startTestApp({ bodyLimit: limit });
  });
  afterAll(() => app.close());

  const count = async (name: string) => (await app.request('GET', `/api/${name}/`)).body.count as number;

  describe.each(perCollection)('%s', (name, f) => {
    const text = Object.keys(f.valid(0)).find((k) => typeof f.valid(0)[k] === 'string' && k !== 'isbn' && k !== 'email')!;
    const rows: [string, { given: () => { method: 'POST' | 'PUT' | 'PATCH'; raw?: string; stream?: string }; want: { status: number } }][] =
      [
        ['exactly the limit, valid', { given: () => ({ method: 'POST', raw: padded(f.valid(++seq), limit) }), want: { status: 201 } }],
        ['one byte over', { given: () => ({ method: 'POST', raw: padded(f.valid(++seq), limit + 1) }), want: { status: 413 } }],
        ['ten times over', { given: () => ({ method: 'POST', raw: padded(f.valid(++seq), 10 * limit) }), want: { status: 413 } }],
        // The limit counts bytes: 600 two-byte characters are 1,200 bytes.
        [
          'fewer characters than the limit, more bytes',
          { given: () => ({ method: 'POST', raw: JSON.stringify({ ...f.valid(++seq), [text]: 'é'.repeat(600) }) }), want: { status: 413 } },
        ],
        // Without Content-Length the limit still holds, counted as the body arrives.
        [
          'streamed, with no Content-Length',
          { given: () => ({ method: 'POST', stream: padded(f.valid(++seq), 4 * limit) }), want: { status: 413 } },
        ],
        ['a PUT over the limit', { given: () => ({ method: 'PUT', raw: padded(f.valid(++seq), limit + 1) }), want: { status: 413 } }],
        ['a PATCH over the limit', { given: () => ({ method: 'PATCH', raw: padded(f.patch, limit + 1) }), want: { status: 413 } }],
      ];
    test.each(rows)('%s', async (_, { given, want }) => {
      const existing = (await app.request('POST', `/api/${name}/`, { body: f.valid(++seq) })).body;
      const before = await count(name);
      const req = given();
      const path = req.method === 'POST' ? `/api/${name}/` : `/api/${name}/${existing.id}/`;
      const res = req.stream
        ? await rawRequest(app.url, req.method, path, {
            headers: { 'content-type': 'application/json' },
            body: new ReadableStream({
              start(controller) {
                const bytes = Buffer.from(req.stream!);
                for (let i = 0; i < bytes.length; i += 256) controller.enqueue(new Uint8Array(bytes.subarray(i, i + 256)));
                controller.close();
              },
            }),
          })
        : await app.request(req.method, path, { raw: req.raw });
      if (want.status === 201) {
        expect(res.status).toBe(201);
        expect(await count(name)).toBe(before + 1);
        return;
      }
      expectProblem(res, want.status);
      expect(res.body.detail).toContain(String(limit));
      expect(await count(name)).toBe(before);
      expect((await app.request('GET', `/api/${name}/${existing.id}/`)).body).toEqual(existing);
    });
  });
});

describe('503 with Retry-After when the database cannot be reached', () => {
  // No MySQL server is needed: each row is a port where none answers as one, so this runs in
  // both dialect runs. The rows are the ways a database host fails in practice.
  const servers: net.Server[] = [];
  const listening = async (onConnection: (socket: net.Socket) => void): Promise<number> => {
    const server = net.createServer(onConnection);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  const opened: { db: Db; server: Server }[] = [];
  let silenced: jest.SpyInstance;

  async function unreachableApp(port: number): Promise<string> {
    const db = openDb({ client: 'mysql', host: '127.0.0.1', port, user: 'root', password: '', database: 'records_test_unreachable' });
    const app = await createApp({ db, bodyLimit: 1024 * 1024, fallbackHost: 'localhost' });
    const server: Server = await new Promise((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    opened.push({ db, server });
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  beforeAll(() => {
    // knex logs every failed connection attempt with its stack; that is the log, not the answer.
    silenced = jest.spyOn(console, 'log').mockImplementation(() => {});
  });
  afterAll(async () => {
    silenced.mockRestore();
    for (const { db, server } of opened) {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await db.destroy();
    }
    for (const s of servers) await new Promise((r) => s.close(r));
  });

  const hosts: [string, { given: () => Promise<number> }][] = [
    ['nothing listens on the port', { given: () => Promise.resolve(1) }],
    ['the server drops every connection', { given: () => listening((socket) => socket.destroy()) }],
    ['something that is not MySQL answers', { given: () => listening((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n')) }],
  ];

  describe.each(hosts)('%s', (_, { given }) => {
    let url: string;
    beforeAll(async () => {
      url = await unreachableApp(await given());
    });

    describe.each(perCollection)('%s', (name, f) => {
      const operations: [string, { method: string; path: string; body?: unknown }][] = [
        ['list', { method: 'GET', path: `/api/${name}/?search=x` }],
        ['create', { method: 'POST', path: `/api/${name}/`, body: f.valid(1) }],
        ['get', { method: 'GET', path: `/api/${name}/1/` }],
        ['replace', { method: 'PUT', path: `/api/${name}/1/`, body: f.valid(1) }],
        ['update', { method: 'PATCH', path: `/api/${name}/1/`, body: f.patch }],
        ['delete', { method: 'DELETE', path: `/api/${name}/1/` }],
      ];
      test.each(operations)('%s', async (__, op) => {
        const started = Date.now();
        const res = await rawRequest(url, op.method, op.path, {
          headers: op.body ? { 'content-type': 'application/json' } : {},
          body: op.body ? JSON.stringify(op.body) : undefined,
        });
        expectProblem(res, 503);
        expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
        expect(res.body.errors).toBeUndefined();
        // A client waits for this answer; it must come well before the pool's acquire timeout (the query timeout, 5 s).
        expect(Date.now() - started).toBeLessThan(4000);
      });
    });

    test('HEAD of a list: 503, no body', async () => {
      const res = await rawRequest(url, 'HEAD', '/api/posts/');
      expect({ status: res.status, body: res.body, retry: res.headers.get('retry-after') }).toEqual({
        status: 503,
        body: '',
        retry: expect.stringMatching(/^[1-9][0-9]*$/),
      });
    });

    test('requests that never reach the database keep their own answers', async () => {
      expectProblem(await rawRequest(url, 'GET', '/api/posts/abc/'), 404);
      expectProblem(await rawRequest(url, 'GET', '/api/posts/?page=0'), 400);
      expectProblem(await rawRequest(url, 'POST', '/api/posts/', { headers: { 'content-type': 'text/plain' }, body: 'x' }), 415);
    });
  });
});

describe('500 for an unexpected database error', () => {
  let app: TestApp;
  const logged = () => app.logs.filter((l) => l.msg === 'unexpected error');
  beforeAll(async () => {
    app = await startTestApp();
    await app.request('POST', '/api/tasks/', { body: { title: 'before the table went away' } });
    await app.database.db.schema.dropTable('tasks');
  });
  afterAll(() => app.close());

  // What an attacker could learn from: the statement, the table, the driver's words, a stack.
  const LEAKS = [
    /select/i,
    /insert/i,
    /update `|update "/i,
    /delete from/i,
    /\bSQL/i,
    /sqlite/i,
    /mysql/i,
    /\btasks\b/,
    /no such table/i,
    /doesn't exist/i,
    /\bat /,
    /Error:/,
    /\.ts\b/,
    /\.js\b/,
    /node_modules/,
  ];

  const rows: [string, { given: { method: string; path: string; body?: unknown }; want: { status: 500 } }][] = [
    ['list', { given: { method: 'GET', path: '/api/tasks/' }, want: { status: 500 } }],
    ['search', { given: { method: 'GET', path: '/api/tasks/?search=x' }, want: { status: 500 } }],
    ['create', { given: { method: 'POST', path: '/api/tasks/', body: { title: 'x' } }, want: { status: 500 } }],
    ['get', { given: { method: 'GET', path: '/api/tasks/1/' }, want: { status: 500 } }],
    ['replace', { given: { method: 'PUT', path: '/api/tasks/1/', body: { title: 'x' } }, want: { status: 500 } }],
    ['update', { given: { method: 'PATCH', path: '/api/tasks/1/', body: { status: 'done' } }, want: { status: 500 } }],
    ['delete', { given: { method: 'DELETE', path: '/api/tasks/1/' }, want: { status: 500 } }],
  ];
  test.each(rows)('%s: a bare problem; the error goes to the log', async (_, { given, want }) => {
    const before = logged().length;
    const res = await app.request(given.method, given.path, { body: given.body });
    expectProblem(res, want.status);
    expect(res.body.errors).toBeUndefined();
    const text = JSON.stringify(res.body);
    for (const leak of LEAKS) expect({ leak: String(leak), found: leak.test(text) }).toEqual({ leak: String(leak), found: false });
    expect(logged().length).toBe(before + 1);
    expect(String(logged()[before].err?.message)).toMatch(/tasks/);
  });

  test('HEAD of the broken list: 500, no body', async () => {
    const res = await app.request('HEAD', '/api/tasks/');
    expect({ status: res.status, body: res.body }).toEqual({ status: 500, body: '' });
  });

  test.each(fixtures.filter((f) => f.name !== 'tasks').map((f) => [f.name, f] as const))(
    'the process keeps serving %s afterwards',
    async (name, f) => {
      const created = await app.request('POST', `/api/${name}/`, { body: f.valid(1) });
      expect(created.status).toBe(201);
      const list = await app.request('GET', `/api/${name}/`);
      expect({ status: list.status, count: list.body.count }).toEqual({ status: 200, count: 1 });
    },
  );
});
