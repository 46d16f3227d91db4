import { startTestApp, type TestApp } from '../../helpers/app';
import { fixtures } from '../../helpers/fixtures';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  test('create answers 201 with Location, defaults filled and read-only fields ignored', async () => {
    const res = await app.request('POST', `/api/${name}/`, {
      body: { ...f.valid(1), id: 999999, created_at: '2000-01-01T00:00:00.000Z', updated_at: '2000-01-01T00:00:00.000Z' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      ...f.defaults,
      ...f.valid(1),
      ...(name === 'products' ? { price: '19.99' } : {}),
      id: expect.any(Number),
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(res.body.id).not.toBe(999999);
    expect(res.body.created_at).toBe(res.body.updated_at);
    expect(res.headers.get('location')).toBe(`/api/${name}/${res.body.id}/`);
  });

  // Their values are ignored, but they are typed as in a record: another type is a 400, as for
  // any field, and a string in them is held to the same Unicode rules.
  test.each([
    ['a NUL', { id: 'a\u0000b' }, 'id'],
    ['a lone surrogate', { created_at: '\ud800' }, 'created_at'],
    ['deep nesting', { updated_at: JSON.parse(`${'['.repeat(40)}${']'.repeat(40)}`) as unknown }, 'updated_at'],
  ])('read-only fields of the wrong type are a 400 naming them: %s', async (_n, readOnly, field) => {
    const res = await app.request('POST', `/api/${name}/`, { body: { ...f.valid(3), ...readOnly } });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  test('get, patch, put and delete a record', async () => {
    const created = (await app.request('POST', `/api/${name}/`, { body: f.valid(2) })).body;

    const got = await app.request('GET', `/api/${name}/${created.id}/`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(created);

    await new Promise((r) => setTimeout(r, 5));
    const patched = await app.request('PATCH', `/api/${name}/${created.id}/`, { body: f.patch });
    expect(patched.status).toBe(200);
    const expectedPatch = name === 'products' ? { price: '5.00', stock: 3 } : f.patch;
    expect(patched.body).toEqual({ ...created, ...expectedPatch, updated_at: expect.stringMatching(ISO_MS) });
    expect(patched.body.updated_at > created.updated_at).toBe(true);
    expect(patched.body.created_at).toBe(created.created_at);

    // PUT is a full replacement: what the body leaves out goes back to its default.
    const replaced = await app.request('PUT', `/api/${name}/${created.id}/`, { body: { ...patched.body, ...f.valid(3) } });
    expect(replaced.status).toBe(200);
    const put = await app.request('PUT', `/api/${name}/${created.id}/`, { body: f.valid(3) });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ ...created, ...f.defaults, ...f.valid(3), updated_at: expect.stringMatching(ISO_MS) });

    const deleted = await app.request('DELETE', `/api/${name}/${created.id}/`);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBe('');
    expect((await app.request('GET', `/api/${name}/${created.id}/`)).status).toBe(404);
    expect((await app.request('DELETE', `/api/${name}/${created.id}/`)).status).toBe(404);
    expect((await app.request('PATCH', `/api/${name}/${created.id}/`, { body: f.patch })).status).toBe(404);
    expect((await app.request('PUT', `/api/${name}/${created.id}/`, { body: f.valid(3) })).status).toBe(404);
  });
});
