// The benchmark's baseline: the same URLs, the same SQL and the same JSON as the service, on
// bare express and mysql2, with no spec routing and no validation. What the service costs on
// top of this is what its layers cost. It trusts its input: it is for benchmarks only.
import express, { type Request, type Response } from 'express';
import { createPool, type Pool, type RowDataPacket, type ResultSetHeader } from 'mysql2';
import { collections } from '../../src/collections';
import { apiTimestamp, dbTimestamp } from '../../src/db/time';
import { encodeCursor, fingerprint } from '../../src/handlers/cursor';
import { problemBody } from '../../src/problems';

const SEARCH_FIELDS: Record<string, readonly string[]> = Object.fromEntries(collections.map((c) => [c.name, c.searchFields]));
const FOLD_COLLATIONS = ['utf8mb4_uca1400_as_cs', 'utf8mb4_0900_as_cs'];

const url = new URL(process.env.DATABASE_URL ?? '');
const pool: Pool = createPool({
  host: url.hostname,
  port: Number(url.port || 3306),
  user: decodeURIComponent(url.username || 'root'),
  password: decodeURIComponent(url.password),
  database: decodeURIComponent(url.pathname.slice(1)),
  charset: 'utf8mb4',
  timezone: 'Z',
  dateStrings: true,
  supportBigNumbers: true,
  // The service's Knex pool holds at most 10 connections; so does this one.
  connectionLimit: 10,
});
pool.on('connection', (conn) => {
  conn.query(
    "SET SESSION time_zone = '+00:00', sql_mode = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'",
  );
});
const db = pool.promise();

type Row = RowDataPacket & { id: number | string; created_at: string; updated_at: string };

function serialize(row: Row): Record<string, unknown> {
  const { version: _version, ...fields } = row;
  return {
    ...fields,
    id: Number(row.id),
    created_at: apiTimestamp(row.created_at),
    updated_at: apiTimestamp(row.updated_at),
  };
}

function problem(res: Response, kind: 'not-found' | 'route-not-found' | 'page-not-found', detail: string): void {
  const body = problemBody(kind, detail);
  res.status(body.status).type('application/problem+json').send(JSON.stringify(body));
}

/** The query as express 5's default (simple) parser gives it: a string, or an array when repeated. */
function query(req: Request): Record<string, string | string[] | undefined> {
  return req.query as Record<string, string | string[] | undefined>;
}

function pageUrl(req: Request, page: number): string {
  return pageUrlWith(req, 'page', String(page));
}

function pageUrlWith(req: Request, param: string, value: string): string {
  const q = req.originalUrl.indexOf('?');
  const params = new URLSearchParams(q === -1 ? '' : req.originalUrl.slice(q + 1));
  params.set(param, value);
  return `${req.protocol}://${req.get('host')}${q === -1 ? req.originalUrl : req.originalUrl.slice(0, q)}?${params.toString()}`;
}

async function findRow(table: string, id: number): Promise<Row | undefined> {
  const [rows] = await db.query<Row[]>('select * from ?? where `id` = ? limit 1', [table, id]);
  return rows[0];
}

async function main(): Promise<void> {
  let collation: string | undefined;
  for (const name of FOLD_COLLATIONS) {
    try {
      await db.query(`SELECT _utf8mb4'a' COLLATE ${name} AS a`);
      collation = name;
      break;
    } catch {
      // not on this server; try the next one
    }
  }
  const fold = collation ? `LOWER(?? COLLATE ${collation}) COLLATE utf8mb4_bin` : 'LOWER(??)';
  const term = collation ? `LOWER(? COLLATE ${collation}) COLLATE utf8mb4_bin` : 'LOWER(?)';

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const tables = Object.keys(SEARCH_FIELDS);
  const table = (req: Request) => (tables.includes(String(req.params.collection)) ? String(req.params.collection) : undefined);

  app.get('/api/:collection/', async (req, res) => {
    const name = table(req);
    if (!name) return problem(res, 'route-not-found', 'Nothing here');
    const page = Number(req.query.page ?? 1);
    const pageSize = Number(req.query.page_size ?? 10);
    if (req.query.cursor !== undefined) return cursorPage(req, res, name, pageSize);
    const terms = String(query(req).search ?? '')
      .split(/[\s,]+/)
      .filter(Boolean);
    // The same WHERE clause the service's Knex builds: every term in some search field.
    const where = terms.map(() => `(${SEARCH_FIELDS[name].map(() => `INSTR(${fold}, ${term}) > 0`).join(' or ')})`).join(' and ');
    const bindings = terms.flatMap((t) => SEARCH_FIELDS[name].flatMap((f) => [f, t]));
    const filter = where ? ` where ${where}` : '';
    const [[{ n }]] = await db.query<RowDataPacket[]>(`select count(*) as \`n\` from ??${filter}`, [name, ...bindings]);
    const count = Number(n);
    const offset = (page - 1) * pageSize;
    if (page > 1 && offset >= count) return problem(res, 'page-not-found', `Page ${page} is past the last page`);
    const [rows] = await db.query<Row[]>(`select * from ??${filter} order by \`created_at\` desc, \`id\` desc limit ? offset ?`, [
      name,
      ...bindings,
      pageSize,
      offset,
    ]);
    res.json({
      count,
      next: page * pageSize < count ? pageUrl(req, page + 1) : null,
      previous: page > 1 ? pageUrl(req, page - 1) : null,
      results: rows.map(serialize),
    });
  });

  // The service's keyset query for the default order, with its cursor format, unchecked.
  const secret = (await db.query<RowDataPacket[]>("select `value` from `service_secrets` where `name` = 'cursor'"))[0][0].value as string;
  async function cursorPage(req: Request, res: Response, name: string, pageSize: number) {
    const token = String(query(req).cursor);
    const after = token ? (JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()) as { k: unknown[] }).k : undefined;
    const [rows] = await db.query<Row[]>(
      `select * from ??${after ? ' where (`created_at` < ? or (`created_at` = ? and `id` < ?))' : ''} order by \`created_at\` desc, \`id\` desc limit ?`,
      [name, ...(after ? [after[0], after[0], after[1]] : []), pageSize + 1],
    );
    const page = rows.slice(0, pageSize);
    const last = page[page.length - 1];
    const link = (values: unknown[]) => pageUrlWith(req, 'cursor', encodeCursor(secret, 'n', values, fingerprint(name, {}, [])));
    res.json({
      count: null,
      next: rows.length > pageSize && last ? link([last.created_at, last.id]) : null,
      previous: after && page[0] ? link([page[0].created_at, page[0].id]) : null,
      results: page.map(serialize),
    });
  }

  app.get('/api/:collection/:id/', async (req, res) => {
    const name = table(req);
    const row = name && (await findRow(name, Number(req.params.id)));
    if (!row) return problem(res, 'not-found', 'No record with this id');
    res.json(serialize(row));
  });

  app.post('/api/:collection/', express.json(), async (req, res) => {
    const name = table(req);
    if (!name) return problem(res, 'route-not-found', 'Nothing here');
    const stamp = dbTimestamp();
    const values: Record<string, unknown> = { ...(req.body as Record<string, unknown>), created_at: stamp, updated_at: stamp };
    const columns = Object.keys(values).sort();
    const [result] = await db.query<ResultSetHeader>(
      `insert into ?? (${columns.map(() => '??').join(', ')}) values (${columns.map(() => '?').join(', ')})`,
      [name, ...columns, ...columns.map((c) => values[c])],
    );
    const row = await findRow(name, result.insertId);
    res.status(201).location(`/api/${name}/${result.insertId}/`).json(serialize(row!));
  });

  app.patch('/api/:collection/:id/', express.json(), async (req, res) => {
    const name = table(req);
    if (!name) return problem(res, 'route-not-found', 'Nothing here');
    const values: Record<string, unknown> = { ...(req.body as Record<string, unknown>), updated_at: dbTimestamp() };
    const columns = Object.keys(values);
    const [result] = await db.query<ResultSetHeader>(`update ?? set ${columns.map(() => '?? = ?').join(', ')} where \`id\` = ?`, [
      name,
      ...columns.flatMap((c) => [c, values[c]]),
      Number(req.params.id),
    ]);
    const row = result.affectedRows ? await findRow(name, Number(req.params.id)) : undefined;
    if (!row) return problem(res, 'not-found', 'No record with this id');
    res.json(serialize(row));
  });

  const host = process.env.HOST || '127.0.0.1';
  const server = app.listen(Number(process.env.PORT ?? 0), host, () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    // The service's start-up line, so that one helper (scripts/lib/service-process.ts) starts both.
    console.log(JSON.stringify({ msg: 'listening', url: `http://${host}:${port}/`, port }));
  });
  // Measuring is over when it is stopped: requests still in flight need no answer.
  process.once('SIGTERM', () => process.exit(0));
  process.once('SIGINT', () => process.exit(0));
}

main().catch((err) => {
  console.error(`baseline failed to start: ${(err as Error).message}`);
  process.exit(1);
});
