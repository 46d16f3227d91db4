import { startTestApp, type TestApp } from '../../helpers/app';
import { fixtures } from '../../helpers/fixtures';

// RFC 7240's return=minimal for every caller, and the empty PATCH that writes nothing.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const minimal = { prefer: 'handling=lenient, return=minimal' };

describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, fixture) => {
  test('Prefer: return=minimal answers every write 204 with ETag, Location on a create', async () => {
    const created = await app.request('POST', `/api/${name}/`, { body: fixture.valid(9101), headers: minimal });
    expect([created.status, created.body, created.headers.get('preference-applied')]).toEqual([204, '', 'return=minimal']);
    expect(created.headers.get('etag')).toBe('"1"');
    const location = created.headers.get('location')!;
    const replaced = await app.request('PUT', location, { body: fixture.valid(9102), headers: minimal });
    expect([replaced.status, replaced.headers.get('etag')]).toEqual([204, '"2"']);
    const patched = await app.request('PATCH', location, { body: fixture.patch, headers: { prefer: 'return="minimal"' } });
    expect([patched.status, patched.headers.get('etag')]).toEqual([204, '"3"']);
    const bulk = await app.request('POST', `/api/${name}/bulk/`, { body: [fixture.valid(9103)], headers: minimal });
    expect([bulk.status, bulk.body]).toEqual([204, '']);
    // Any other preference leaves the answer as it was: the record, as the minimal writes left it.
    const full = await app.request('PATCH', location, { body: fixture.patch, headers: { prefer: 'return=representation' } });
    expect([full.status, full.headers.get('preference-applied'), full.headers.get('etag')]).toEqual([200, null, '"4"']);
    const stored = await app.request('GET', location);
    expect(stored.body).toEqual(full.body);
  });

  test('an empty PATCH changes nothing, and still honours its preconditions', async () => {
    const created = await app.request('POST', `/api/${name}/`, { body: fixture.valid(9201) });
    const path = `/api/${name}/${created.body.id}/`;
    const empty = await app.request('PATCH', path, { body: {} });
    expect([empty.status, empty.headers.get('etag')]).toEqual([200, '"1"']);
    expect(empty.body).toEqual(created.body);
    const stale = await app.request('PATCH', path, { body: {}, headers: { 'if-match': '"7"' } });
    expect(stale.status).toBe(412);
    const gone = await app.request('PATCH', `/api/${name}/${created.body.id + 1000}/`, { body: {} });
    expect(gone.status).toBe(404);
  });
});
