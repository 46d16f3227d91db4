import { startTestApp, type TestApp } from '../helpers/app';
import { fixtures } from '../helpers/fixtures';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const perCollection = fixtures.map((f) => [f.name, f] as const);

describe.each(perCollection)('%s: a path id that is not a positive integer is 404', (name, f) => {
  // Found by the fuzzer: ids whose percent-encoding is not UTF-8 were a 500.
  const ids: [string, { given: string }][] = [
    ['zero', { given: '0' }],
    ['a word', { given: 'abc' }],
    ['past 2^53', { given: '9007199254740992' }],
    ['an encoded NUL', { given: '%00' }],
    ['a bare percent sign', { given: '%' }],
    ['a percent sign and no hex', { given: '%zz' }],
    ['a byte that is no UTF-8', { given: '%FF' }],
    ['an encoded unpaired surrogate', { given: '%ED%A0%80' }],
    ['an encoded slash', { given: '1%2F2' }],
  ];
  const methods: [string, { body?: unknown }][] = [['GET', {}], ['PUT', { body: f.valid(1) }], ['PATCH', { body: f.patch }], ['DELETE', {}]];
  describe.each(methods)('%s', (method, { body }) => {
    test.each(ids)('%s', async (_n, { given }) => {
      const res = await app.request(method, `/api/${name}/${given}/`, { body });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'No record with this id' });
    });
  });
});
