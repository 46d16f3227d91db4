import { migrate } from '../../../src/schema';
import { dbTimestamp } from '../../../src/db/time';
import { startTestApp, type TestApp } from '../../helpers/app';
import { fixtures } from '../../helpers/fixtures';

// One Unicode form (NFC) for stored and compared text: `é` as one code point (U+00E9) or as `e`
// and U+0301 is one value to search, filters and unique fields (docs/rules.md).
const NFC = 'josé.café';
const NFD = NFC.normalize('NFD');

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

let serial = 0;
const searched = fixtures.filter((f) => f.searchFields.length);

describe.each(searched.map((f) => [f.name, f] as const))('%s', (name, f) => {
  test.each([
    ['written NFD, searched NFC', NFD, 'café'],
    ['written NFC, searched NFD', NFC, 'café'.normalize('NFD')],
  ])('%s: found, and stored NFC', async (_label, written, term) => {
    const field = f.searchFields[0];
    const n = ++serial;
    const body = { ...f.valid(1_000 + n), [field]: `${written}.${n}` };
    const created = await app.request('POST', `/api/${name}/`, { body });
    expect(created.status).toBe(201);
    expect(created.body[field]).toBe(`${NFC}.${n}`);
    const found = await app.request('GET', `/api/${name}/?search=${encodeURIComponent(`${term}.${n}`)}`);
    expect(found.body.results.map((r: { id: number }) => r.id)).toEqual([created.body.id]);
  });
});

test('a unique field compares normalized: josé twice is a 409, however typed', async () => {
  const first = await app.request('POST', '/api/users/', { body: { username: 'josé', email: 'jose1@example.com' } });
  expect(first.status).toBe(201);
  const again = await app.request('POST', '/api/users/', { body: { username: 'josé'.normalize('NFD'), email: 'jose2@example.com' } });
  expect(again.status).toBe(409);
  expect(again.body.errors).toEqual([{ field: 'username', message: expect.any(String) }]);
});

test('a filter finds text written in the other form', async () => {
  const book = { title: 'Le Père Goriot', author: 'Honoré de Balzac'.normalize('NFD'), isbn: '9782070409341' };
  const created = await app.request('POST', '/api/books/', { body: book });
  const byAuthor = await app.request('GET', `/api/books/?author=${encodeURIComponent('Honoré de Balzac')}`);
  expect(byAuthor.body.results.map((r: { id: number }) => r.id)).toEqual([created.body.id]);
});

test('a length limit counts the characters stored: NFD that fits once composed is accepted', async () => {
  // users.username is at most 150 characters: 100 `é` are 200 code points in NFD, 100 in NFC.
  const res = await app.request('POST', '/api/users/', { body: { username: 'é'.repeat(100).normalize('NFD'), email: 'long@example.com' } });
  expect([res.status, res.body.username]).toEqual([201, 'é'.repeat(100)]);
});

test('rows stored before the migration are rewritten to NFC, their version one higher', async () => {
  const { db } = app.database;
  const stamp = dbTimestamp();
  const [id] = await db('posts').insert({
    title: NFD,
    content: `${NFD} body`,
    author: 'a',
    version: 1,
    created_at: stamp,
    updated_at: stamp,
  });
  const [taken] = await db('users').insert({
    username: 'zoë'.normalize('NFD'),
    email: 'z1@example.com',
    first_name: '',
    last_name: '',
    version: 1,
    created_at: stamp,
    updated_at: stamp,
  });
  await db('users').insert({
    username: 'zoë',
    email: 'z2@example.com',
    first_name: '',
    last_name: '',
    version: 1,
    created_at: stamp,
    updated_at: stamp,
  });
  await db('knex_migrations').where({ name: '20261207_015_text_nfc' }).delete();
  await migrate(db);
  const post = await app.request('GET', `/api/posts/${id}/`);
  expect([post.body.title, post.body.content, post.headers.get('etag')]).toEqual([NFC, `${NFC} body`, '"2"']);
  const found = await app.request('GET', `/api/posts/?search=${encodeURIComponent('josé.café body')}`);
  expect(found.body.results.map((r: { id: number }) => r.id)).toEqual([id]);
  // Its NFC form is another user's: left as it was rather than failing the start.
  const kept = await app.request('GET', `/api/users/${taken}/`);
  expect([kept.body.username, kept.headers.get('etag')]).toEqual(['zoë'.normalize('NFD'), '"1"']);
});
