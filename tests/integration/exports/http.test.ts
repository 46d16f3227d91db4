import { startTestApp, type TestApp } from '../../helpers/app';
import { assertMatchesContract } from '../../helpers/contract';
import { fixtures } from '../../helpers/fixtures';

// The export operations (`/api/<collection>/export/`) answer every matching record as NDJSON or
// CSV, in the list's order, with the list's search and filters, and no pages: the same records
// that paging through the list gives.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

/** A record field's value: no resource has an object or array field. */
type Value = string | number | boolean | null;
type Rec = Record<string, Value> & { id: number };

/** A raw answer, checked against the contract like every other response in the tests. */
async function get(path: string, accept: string): Promise<{ status: number; type: string; text: string; headers: Headers }> {
  const res = await fetch(app.url + path, { headers: accept ? { accept } : {} });
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  await assertMatchesContract({
    method: 'GET',
    path: path.split('?')[0],
    status: res.status,
    headers: res.headers,
    body: type.startsWith('application/problem+json') ? JSON.parse(text) : text,
  });
  return { status: res.status, type, text, headers: res.headers };
}

/** Every record of a JSON list, page after page. */
async function allPages(path: string): Promise<Rec[]> {
  const out: Rec[] = [];
  let next: string | null = app.url + path;
  while (next) {
    const res: { status: number; body: any } = await app.request('GET', next.slice(app.url.length));
    expect(res.status).toBe(200);
    out.push(...res.body.results);
    next = res.body.next;
  }
  return out;
}

/** A minimal RFC 4180 reader, for the test's side: quoted fields, doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  expect(field).toBe(''); // the last record ends with CRLF
  return rows;
}

const asText = (v: Value) => (v === null ? '' : String(v));

describe.each(fixtures.map((f) => [f.name, f] as const))('%s', (name, f) => {
  beforeAll(async () => {
    for (let n = 1; n <= 12; n++) expect((await app.request('POST', `/api/${name}/`, { body: f.valid(n) })).status).toBe(201);
  });

  test('NDJSON: every record, one JSON object a line, as the pages give them', async () => {
    const res = await get(`/api/${name}/export/`, 'application/x-ndjson');
    expect(res.status).toBe(200);
    expect(res.type).toBe('application/x-ndjson; charset=utf-8');
    expect(res.text.endsWith('\n')).toBe(true);
    const lines = res.text
      .slice(0, -1)
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(await allPages(`/api/${name}/?page_size=${f.maxPageSize}`));
    expect(lines.length).toBe(12);
  });

  test('CSV: a header row naming the fields, then every record', async () => {
    const res = await get(`/api/${name}/export/`, 'text/csv');
    expect(res.status).toBe(200);
    expect(res.type).toBe('text/csv; charset=utf-8; header=present');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${name}.csv"`);
    const [header, ...rows] = parseCsv(res.text);
    const records = await allPages(`/api/${name}/?page_size=${f.maxPageSize}`);
    expect(header).toEqual(Object.keys(records[0]));
    expect(rows).toEqual(records.map((r) => header.map((h) => asText(r[h]))));
  });

  test.each(['application/x-ndjson', 'text/csv'])('HEAD with Accept: %s answers the headers of the export, no body', async (accept) => {
    const got = await fetch(`${app.url}/api/${name}/export/`, { headers: { accept } });
    await got.text();
    const head = await app.request('HEAD', `/api/${name}/export/`, { headers: { accept } });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    for (const h of ['content-type', 'content-disposition', 'vary']) expect(head.headers.get(h)).toBe(got.headers.get(h));
  });

  test('NDJSON is the default: */* and no Accept get it; an Accept naming neither format is a 406', async () => {
    for (const accept of ['*/*', '']) {
      const res = await get(`/api/${name}/export/`, accept);
      expect([accept, res.status, res.type]).toEqual([accept, 200, 'application/x-ndjson; charset=utf-8']);
    }
    for (const accept of ['application/json', 'text/html']) {
      const res = await get(`/api/${name}/export/`, accept);
      expect([accept, res.status, JSON.parse(res.text).status]).toEqual([accept, 406, 406]);
    }
  });

  // Lists have one media type, so that generated clients type them as the page.
  test.each(['*/*', 'application/json', 'application/x-ndjson', 'text/csv'])('a list asked for %s answers a JSON page', async (accept) => {
    const res = await app.request('GET', `/api/${name}/`, { headers: { accept } });
    expect([res.status, res.headers.get('content-type'), res.body.count]).toEqual([200, 'application/json; charset=utf-8', 12]);
  });

  // One URL, two formats: a shared cache must key them by Accept.
  test.each(['application/x-ndjson', 'text/csv'])('an export asked for %s varies by Accept', async (accept) => {
    const res = await get(`/api/${name}/export/`, accept);
    expect(res.status).toBe(200);
    expect(res.headers.get('vary')?.split(/,\s*/)).toContain('Accept');
  });
});

describe('search, filters and ordering apply; text is quoted as RFC 4180 says', () => {
  const tricky = [
    { title: 'comma, inside', content: 'a "quoted" word', author: 'csv-writer' },
    { title: 'line\nbreak', content: 'carriage\r\nreturn', author: 'csv-writer' },
    { title: 'école ÉCOLE 😀', content: 'plain', author: 'csv-writer' },
    { title: 'other author', content: 'plain', author: 'someone-else' },
  ];
  beforeAll(async () => {
    for (const body of tricky) expect((await app.request('POST', '/api/posts/', { body })).status).toBe(201);
  });

  test.each([
    ['a filter', '?author=csv-writer'],
    ['a filter and an ordering', '?author=csv-writer&ordering=title'],
    ['a search', '?search=plain'],
    ['a search with a filter, oldest first', '?search=plain&author=csv-writer&ordering=created_at'],
    ['a case-folded search', '?search=%C3%89cole'],
  ])('%s: the export is what the pages hold, in their order', async (_name, query) => {
    const want = await allPages(`/api/posts/${query}`);
    expect(want.length).toBeGreaterThan(0);
    const ndjson = await get(`/api/posts/export/${query}`, 'application/x-ndjson');
    expect(
      ndjson.text
        .slice(0, -1)
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(want);
    const [header, ...rows] = parseCsv((await get(`/api/posts/export/${query}`, 'text/csv')).text);
    expect(rows).toEqual(want.map((r) => header.map((h) => asText(r[h]))));
  });

  test('commas, quotes, CR, LF and non-ASCII text are quoted and kept byte for byte', async () => {
    const { text } = await get('/api/posts/export/?author=csv-writer&ordering=id', 'text/csv');
    expect(text).toContain('"comma, inside","a ""quoted"" word",csv-writer,');
    expect(text).toContain('"line\nbreak","carriage\r\nreturn",csv-writer,');
    expect(text).toContain(',école ÉCOLE 😀,plain,csv-writer,');
  });

  // OWASP "CSV Injection": a spreadsheet runs a cell that starts with = + - @, a tab or CR (after
  // any 's). Such string cells get a leading ' inside quotes; NDJSON keeps the text as it is.
  test.each([
    ['=', '=HYPERLINK("http://evil.example","x")', '"\'=HYPERLINK(""http://evil.example"",""x"")"'],
    ['+', "+1+cmd|' /C calc'!A0", "\"'+1+cmd|' /C calc'!A0\""],
    ['-', '-2+3', '"\'-2+3"'],
    ['@', '@SUM(1+1)', '"\'@SUM(1+1)"'],
    ['a tab', '\t=1', '"\'\t=1"'],
    ['a carriage return', '\r=1', '"\'\r=1"'],
    // Guarded too, so that one ' off every guarded cell gives the text back (ADR 0020).
    ["' before =", "'=a, b", '"\'\'=a, b"'],
  ])('a string cell starting with %s is neutralised', async (_n, title, cell) => {
    const created = await app.request('POST', '/api/posts/', { body: { title, content: 'formula', author: 'csv-formula' } });
    expect(created.status).toBe(201);
    const csv = await get(`/api/posts/export/?author=csv-formula&ordering=-id`, 'text/csv');
    const line = csv.text.split('\r\n')[1];
    expect(line.startsWith(`${created.body.id},${cell},formula,csv-formula,`)).toBe(true);
    expect(parseCsv(csv.text)[1][1]).toBe(`'${title}`);
    const ndjson = await get(`/api/posts/export/?author=csv-formula&ordering=-id`, 'application/x-ndjson');
    expect(JSON.parse(ndjson.text.split('\n')[0]).title).toBe(title);
  });

  test('numbers stay numbers: a stock, or a price (a decimal string that never starts with a sign), gets no prefix', async () => {
    const created = await app.request('POST', '/api/products/', {
      body: { name: '-minus product', description: '+plus', price: '0.5', stock: 3 },
    });
    expect(created.status).toBe(201);
    const [header, ...rows] = parseCsv((await get(`/api/products/export/?ordering=-id&search=product`, 'text/csv')).text);
    const row = Object.fromEntries(header.map((h, i) => [h, rows[0][i]]));
    expect(row).toMatchObject({ name: "'-minus product", description: "'+plus", price: '0.50', stock: '3' });
  });

  test('an empty result is a header row alone (CSV) or an empty body (NDJSON)', async () => {
    expect((await get('/api/posts/export/?search=nothing-matches-this', 'application/x-ndjson')).text).toBe('');
    expect((await get('/api/posts/export/?search=nothing-matches-this', 'text/csv')).text).toBe(
      'id,title,content,author,created_at,updated_at\r\n',
    );
  });

  test('a bad query is still a 400 problem', async () => {
    const res = await get('/api/posts/export/?ordering=nope', 'text/csv');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ status: 400, errors: [{ field: 'ordering' }] });
  });
});

describe('behind the same token and rate limit', () => {
  const TOKEN = 'tok_export_test_0123456789abcdef';
  let guarded: TestApp;
  beforeAll(async () => {
    guarded = await startTestApp({ apiTokens: [TOKEN], rateLimitPerMinute: 2 });
  });
  afterAll(() => guarded.close());

  test('no token: 401; a token: 200; past the quota: 429', async () => {
    const ask = (headers: Record<string, string>) =>
      fetch(`${guarded.url}/api/posts/export/`, { headers: { accept: 'text/csv', ...headers } });
    expect((await ask({})).status).toBe(401);
    const ok = await ask({ authorization: `Bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('ratelimit')).toBeTruthy();
    await ok.text();
    expect((await ask({ authorization: `Bearer ${TOKEN}` })).status).toBe(429);
  });
});
