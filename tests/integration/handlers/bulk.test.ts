import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../helpers/app';
import { fixtures, type Fixture } from '../../helpers/fixtures';

// Bulk create and bulk delete, table-driven over the collections: each all or none.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

let serial = 500_000;
const batch = (f: Fixture, size: number) => Array.from({ length: size }, () => f.valid(++serial));

/** How many records the collection holds, as the API counts them (the trigger-kept count). */
async function count(f: Fixture): Promise<number> {
  const res = await app.request('GET', `/api/${f.name}/?page_size=1`);
  expect(res.status).toBe(200);
  return res.body.count;
}

const bulkCreate = (f: Fixture, body: unknown, headers: Record<string, string> = {}) =>
  app.request('POST', `/api/${f.name}/bulk/`, { body, headers });
const bulkDelete = (f: Fixture, ids: unknown[]) => app.request('POST', `/api/${f.name}/bulk-delete/`, { body: { ids } });

describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (_name, f) => {
  test('creates every record, in order, counted and searchable at once', async () => {
    const before = await count(f);
    const body = batch(f, 25);
    const res = await bulkCreate(f, body);
    expect(res.status).toBe(201);
    expect(res.body.results).toHaveLength(25);
    res.body.results.forEach((r: Record<string, unknown>, i: number) => expect(r).toMatchObject(body[i]));
    const ids = res.body.results.map((r: { id: number }) => r.id);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(await count(f)).toBe(before + 25);
    const field = f.searchFields[0];
    const last = body[24][field] as string;
    const found = await app.request('GET', `/api/${f.name}/?search=${encodeURIComponent(`"${last}"`)}`);
    expect(found.body.results.map((r: { id: number }) => r.id)).toContain(ids[24]);
    const one = await app.request('GET', `/api/${f.name}/${ids[3]}/`);
    expect(one.body).toEqual(res.body.results[3]);
  });

  test('one invalid record: 400 naming [index].field, nothing written', async () => {
    const before = await count(f);
    const body = batch(f, 5);
    body[3] = { ...body[3], unknown_field: 1 };
    const res = await bulkCreate(f, body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: '[3].unknown_field', message: 'is not a field of this resource' }]);
    expect(await count(f)).toBe(before);
  });

  test('every invalid record is named', async () => {
    const body = [...batch(f, 2), {}, ...batch(f, 1), {}];
    const res = await bulkCreate(f, body);
    expect(res.status).toBe(400);
    const fields = (res.body.errors as { field: string }[]).map((e) => e.field.split('.')[0]);
    expect([...new Set(fields)].sort()).toEqual(['[2]', '[4]']);
  });

  test.each([
    ['an empty list', []],
    ['an object instead of a list', {}],
  ])('%s: 400', async (_what, body) => {
    expect((await bulkCreate(f, body)).status).toBe(400);
  });

  test('the largest batch, 1,000 records, goes in whole', async () => {
    const before = await count(f);
    const res = await bulkCreate(f, batch(f, 1000));
    expect(res.status).toBe(201);
    expect(res.body.results).toHaveLength(1000);
    expect(await count(f)).toBe(before + 1000);
    const last = res.body.results[999];
    expect((await app.request('GET', `/api/${f.name}/${last.id}/`)).body).toEqual(last);
  });

  test('1,001 records: 400, nothing written', async () => {
    const before = await count(f);
    const res = await bulkCreate(f, batch(f, 1001));
    expect(res.status).toBe(400);
    expect(await count(f)).toBe(before);
  });

  test('an Idempotency-Key answers the first response again and creates nothing more', async () => {
    const key = `bulk-${randomBytes(6).toString('hex')}`;
    const body = batch(f, 3);
    const first = await bulkCreate(f, body, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    const before = await count(f);
    const again = await bulkCreate(f, body, { 'idempotency-key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await count(f)).toBe(before);
    const other = await bulkCreate(f, batch(f, 1), { 'idempotency-key': key });
    expect(other.status).toBe(422);
  });

  test('bulk delete: every id, all at once', async () => {
    const ids = (await bulkCreate(f, batch(f, 4))).body.results.map((r: { id: number }) => r.id);
    const before = await count(f);
    const res = await bulkDelete(f, ids);
    expect(res.status).toBe(204);
    expect(await count(f)).toBe(before - 4);
    for (const id of ids) expect((await app.request('GET', `/api/${f.name}/${id}/`)).status).toBe(404);
  });

  test('bulk delete with ids that name nothing: 404 naming them, nothing deleted', async () => {
    const ids = (await bulkCreate(f, batch(f, 3))).body.results.map((r: { id: number }) => r.id);
    const before = await count(f);
    const missing = [999_999_001, 999_999_002];
    const res = await bulkDelete(f, [ids[0], missing[0], ids[1], missing[1], ids[2]]);
    expect(res.status).toBe(404);
    expect(res.body.errors).toEqual([
      { field: 'ids[1]', message: expect.stringContaining(String(missing[0])) },
      { field: 'ids[3]', message: expect.stringContaining(String(missing[1])) },
    ]);
    expect(await count(f)).toBe(before);
    for (const id of ids) expect((await app.request('GET', `/api/${f.name}/${id}/`)).status).toBe(200);
  });

  test.each([
    ['an id twice', [1, 1]],
    ['no ids', []],
    ['an id that is not a positive integer', [0]],
  ])('bulk delete with %s: 400', async (_what, ids) => {
    expect((await bulkDelete(f, ids)).status).toBe(400);
  });

  test('GET on the bulk paths: 405', async () => {
    for (const path of ['bulk', 'bulk-delete']) {
      const res = await app.request('GET', `/api/${f.name}/${path}/`);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });
});

describe.each(fixtures.filter((f) => f.uniqueFields.length).map((f) => [f.name, f] as const))('%s, a unique field', (_name, f) => {
  test('taken earlier in the batch: 409 naming the later index, nothing written', async () => {
    const before = await count(f);
    const body = batch(f, 4);
    const field = f.uniqueFields[0];
    body[2] = { ...body[2], [field]: body[0][field] };
    const res = await bulkCreate(f, body);
    expect(res.status).toBe(409);
    expect(res.body.errors).toEqual([{ field: `[2].${field}`, message: expect.any(String) }]);
    // "has an isbn", "has a username": the article agrees with the field's name.
    expect(res.body.detail).toContain(`has ${/^[aeiou]/.test(field) ? 'an' : 'a'} ${field} that`);
    expect(await count(f)).toBe(before);
  });

  test('taken by a stored record: 409 naming the index, nothing written', async () => {
    const stored = (await app.request('POST', `/api/${f.name}/`, { body: f.valid(++serial) })).body;
    const before = await count(f);
    const body = batch(f, 3);
    const field = f.uniqueFields[0];
    body[1] = { ...body[1], [field]: stored[field] };
    const res = await bulkCreate(f, body);
    expect(res.status).toBe(409);
    expect(res.body.errors).toEqual([{ field: `[1].${field}`, message: expect.any(String) }]);
    expect(await count(f)).toBe(before);
    // The batch's other values were not kept: the same batch with the clash fixed goes in whole.
    body[1] = f.valid(++serial);
    expect((await bulkCreate(f, body)).status).toBe(201);
  });
});
