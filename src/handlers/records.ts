import { listRecords, seekRecords, walkSnapshot } from './pages';
import type { Request, Response } from 'express';
import type { Context } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import type { Collection, PageOf, ResourceName, Verb } from '../collections';
import type { Db } from '../db/connection';
import type { Search } from '../search';
import { deleteRecord, findRecord, type SeekRequest, updateRecord, type Row, type VersionCondition } from '../db/records';
import { getSecret } from '../db/secrets';
import { dbTimestamp } from '../db/time';
import { etag, ifMatchVersions, ifNoneMatchHits, ifNoneMatchVersions, isTagList } from './conditional';
import { exportFormat, streamExport } from './export';
import { type LinkOrigin, pageUrl } from './links';
import { sendJson, stringifier } from './json';
import { HttpProblem, invalid } from '../problems';
import { createIdempotently } from './idempotency';
import { answerMinimal } from './prefer';
import { mapRows, recordSerializer, writeFields, writeValues } from './serialize';
import { boundary, decodeCursor, encodeCursor, fingerprint } from './cursor';
import { filters, type ListQuery, orderKeys, searchTerms, sortInfo } from './list-query';

export type Handler = (c: Context, req: Request, res: Response) => void | Promise<void>;

export interface HandlerDeps {
  db: Db;
  search: Search;
  spec: OpenAPIV3.Document;
  /** Host for absolute links when the request's Host header is missing or not sane. */
  links: LinkOrigin;
}

/** A query parameter's default, from the (dereferenced) operation the request was routed to. */
function parameterDefault(operation: Context['operation'], name: string): number {
  const param = (operation.parameters as OpenAPIV3.ParameterObject[]).find((p) => p.name === name);
  return Number((param?.schema as OpenAPIV3.SchemaObject).default);
}

/** The JSON body, as validated against the operation's schema. */
const bodyOf = (ctx: Context) => ctx.request.requestBody as Record<string, unknown>;
/** The path's record id, validated as a positive integer. */
const idOf = (ctx: Context) => Number((ctx.request.params as { id: string }).id);

/** The operations of one collection, as one generic pipeline driven by its declaration. */
export function recordHandlers(c: Collection, deps: HandlerDeps): Record<Verb, Handler> {
  const { db, search } = deps;
  const fields = writeFields(deps.spec, c.resource);
  const serialize = recordSerializer(deps.spec, c);
  /** Export columns: the record's fields in the order the JSON answer has them. */
  const columns = ['id', ...fields.map((f) => f.name), 'created_at', 'updated_at'];
  const sorting = sortInfo(deps.spec, c);
  /** What a cursor is bound to: changing any of these makes old cursors invalid. */
  const cursorBound = ['ordering', 'search', ...Object.keys(c.filters ?? {})];
  const table = { table: c.name, searchFields: c.searchFields };
  const noun = c.resource.toLowerCase();

  const values = (body: Record<string, unknown>, defaults: boolean) => writeValues(fields, body, defaults);

  function sendRecord(ctx: Context, res: Response, status: number, row: Row): void {
    res.setHeader('ETag', etag(row.version));
    sendJson(res, status, stringifier(ctx.operation, status)(serialize(row)));
  }

  /** A write's answer without a body: 204 with the record's ETag alone. */
  function sendNoBody(res: Response, row: Row): void {
    res.setHeader('ETag', etag(row.version));
    res.status(204).end();
  }

  /** A write's answer: the record, or no body (answerMinimal says when). */
  function sendWritten(ctx: Context, req: Request, res: Response, status: number, row: Row): void {
    if (answerMinimal(req, res, c.name)) return sendNoBody(res, row);
    sendRecord(ctx, res, status, row);
  }

  function sendPage(ctx: Context, res: Response, body: PageOf<ResourceName>): void {
    sendJson(res, 200, stringifier(ctx.operation, 200)(body));
  }

  /**
   * A write that found no record it could change: which precondition failed, read from the
   * record as it is now. RFC 9110: a missing record fails If-Match too, while If-None-Match holds
   * for it (404).
   */
  async function writeMissed(req: Request, id: number, condition: VersionCondition): Promise<HttpProblem> {
    const ifMatch = req.get('if-match') !== undefined;
    const row = ifMatch || condition.except ? await findRecord(db, c.name, id) : undefined;
    if (!row)
      return ifMatch
        ? new HttpProblem('stale-etag', `The ${noun} with id ${id} is gone`)
        : new HttpProblem('not-found', `No ${noun} with id ${id}`);
    if (condition.except && (!condition.versions || condition.versions.includes(row.version))) {
      return new HttpProblem('etag-matched', `The ${noun} with id ${id} has a version that If-None-Match names`);
    }
    return new HttpProblem('stale-etag', `The ${noun} with id ${id} has changed`);
  }

  /**
   * Cursor mode: a keyset query from the cursor's boundary row, one row more than the page to
   * learn whether another page follows in the direction of travel. `count` is not computed.
   */
  async function listByCursor(
    ctx: Context,
    req: Request,
    res: Response,
    query: ListQuery,
    base: Omit<SeekRequest, 'after' | 'backward' | 'limit'>,
    pageSize: number,
  ) {
    const secret = await getSecret(db, 'cursor');
    const print = fingerprint(c.name, query, cursorBound);
    let after: unknown[] | undefined;
    let backward = false;
    if (query.cursor !== '') {
      const decoded = decodeCursor(secret, String(query.cursor), base.order, print);
      if (!decoded.ok) throw invalid([{ field: 'cursor', message: decoded.message }]);
      ({ after, backward } = decoded);
    }
    const rows = await seekRecords(db, table, { ...base, after, backward, limit: pageSize + 1 }, search);
    const more = rows.length > pageSize;
    const page = backward ? rows.slice(rows.length - Math.min(rows.length, pageSize)) : rows.slice(0, pageSize);
    // Walking forward, the boundary lies behind; walking back, ahead: that side always has a page.
    const hasNext = backward ? after !== undefined : more;
    const hasPrevious = backward ? more : after !== undefined;
    const link = (direction: 'n' | 'p', values: unknown[]) =>
      pageUrl(req, 'cursor', encodeCursor(secret, direction, values, print), deps.links);
    const first = page.length ? boundary(page[0], base.order) : after;
    const last = page.length ? boundary(page[page.length - 1], base.order) : after;
    const body = {
      count: null,
      next: hasNext && last ? link('n', last) : null,
      previous: hasPrevious && first ? link('p', first) : null,
      results: page.map(serialize),
    } as PageOf<ResourceName>;
    sendPage(ctx, res, body);
  }

  const condition = (req: Request): VersionCondition => {
    const match = req.get('if-match');
    const noneMatch = req.get('if-none-match');
    // A header that is no list of tags is refused, so a typo is told apart from someone's edit.
    const malformed = [
      ...(match !== undefined && !isTagList(match) ? ['If-Match'] : []),
      ...(noneMatch !== undefined && !isTagList(noneMatch) ? ['If-None-Match'] : []),
    ];
    if (malformed.length) {
      throw new HttpProblem(
        'malformed-precondition',
        `${malformed.join(' and ')} must be * or a comma-separated list of entity tags`,
        malformed.map((field) => ({ field, message: 'must be * or a comma-separated list of entity tags ("3", W/"3")' })),
      );
    }
    return {
      ...(match === undefined ? {} : { versions: ifMatchVersions(match) }),
      ...(noneMatch === undefined ? {} : { except: ifNoneMatchVersions(noneMatch) ?? '*' }),
    };
  };

  return {
    async list(ctx, req, res) {
      const query = ctx.request.query as ListQuery;
      const pageSize = (query.page_size as number | undefined) ?? parameterDefault(ctx.operation, 'page_size');
      const filtering = filters(c, query);
      if (filtering.errors.length) throw invalid(filtering.errors);
      const base = { terms: searchTerms(query), filters: filtering.filters, order: orderKeys(query, sorting) };
      if (query.cursor !== undefined) return listByCursor(ctx, req, res, query, base, pageSize);

      const page = (query.page as number | undefined) ?? 1;
      const result = await listRecords(db, table, { ...base, page, pageSize }, search);
      if ('pastEnd' in result) {
        const last = Math.max(1, Math.ceil(result.count / pageSize));
        throw new HttpProblem('page-not-found', `Page ${page} is past the last page (${last})`);
      }
      const body = {
        count: result.count,
        next: page * pageSize < result.count ? pageUrl(req, 'page', page + 1, deps.links) : null,
        previous: page > 1 ? pageUrl(req, 'page', page - 1, deps.links) : null,
        results: result.rows.map(serialize),
      } as PageOf<ResourceName>;
      sendPage(ctx, res, body);
    },

    async export(ctx, req, res) {
      const query = ctx.request.query as ListQuery;
      const filtering = filters(c, query);
      if (filtering.errors.length) throw invalid(filtering.errors);
      const base = { terms: searchTerms(query), filters: filtering.filters, order: orderKeys(query, sorting) };
      // NDJSON or CSV, by Accept: a cache must not answer one with the other.
      res.vary('Accept');
      const format = exportFormat(req);
      if (!format) throw new HttpProblem('not-acceptable', 'An export is application/x-ndjson or text/csv; Accept names neither');
      return streamExport(res, format, {
        name: c.name,
        columns,
        records: (signal) => mapRows(walkSnapshot(db, search, table, base, { signal }), serialize),
      });
    },

    async create(ctx, req, res) {
      const stamp = dbTimestamp();
      const record = { ...values(bodyOf(ctx), true), created_at: stamp, updated_at: stamp };
      const minimal = answerMinimal(req, res, c.name);
      const created = await createIdempotently(db, c.name, req, res, bodyOf(ctx), record, minimal ? undefined : serialize);
      if (created.kind !== 'created') return created.send(res);
      res.location(`/api/${c.name}/${created.row.id}/`);
      if (minimal) return sendNoBody(res, created.row);
      sendRecord(ctx, res, 201, created.row);
    },

    async get(ctx, req, res) {
      const id = idOf(ctx);
      const row = await findRecord(db, c.name, id);
      if (!row) throw new HttpProblem('not-found', `No ${noun} with id ${id}`);
      const ifNoneMatch = req.get('if-none-match');
      if (ifNoneMatch !== undefined && ifNoneMatchHits(ifNoneMatch, row.version)) {
        res.status(304).set('ETag', etag(row.version)).end();
        return;
      }
      sendRecord(ctx, res, 200, row);
    },

    async replace(ctx, req, res) {
      const id = idOf(ctx);
      const when = condition(req);
      const row = await updateRecord(db, c.name, id, { ...values(bodyOf(ctx), true), updated_at: dbTimestamp() }, when);
      if (!row) throw await writeMissed(req, id, when);
      sendWritten(ctx, req, res, 200, row);
    },

    async update(ctx, req, res) {
      const id = idOf(ctx);
      const when = condition(req);
      const patch = values(bodyOf(ctx), false);
      // An empty patch changes nothing, not even the version or updated_at.
      const change = Object.keys(patch).length ? { ...patch, updated_at: dbTimestamp() } : {};
      const row = await updateRecord(db, c.name, id, change, when);
      if (!row) throw await writeMissed(req, id, when);
      sendWritten(ctx, req, res, 200, row);
    },

    async delete(ctx, req, res) {
      const id = idOf(ctx);
      const when = condition(req);
      if (!(await deleteRecord(db, c.name, id, when))) throw await writeMissed(req, id, when);
      res.status(204).end();
    },
  };
}
