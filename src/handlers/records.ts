import type { Request, Response } from 'express';
import type { Context } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import type { Collection, PageOf, RecordOf, ResourceName, Verb } from '../collections';
import type { Db } from '../db/connection';
import { deleteRecord, findRecord, insertRecord, listRecords, updateRecord, type Row, type Values } from '../db/records';
import { parseSearch } from '../db/search';
import { pageUrl } from '../http/links';
import { sendProblem } from '../http/problem';

export type Handler = (c: Context, req: Request, res: Response) => Promise<void>;

export interface HandlerDeps {
  db: Db;
  spec: OpenAPIV3.Document;
  /** Host for absolute links when the request's Host header is missing or not sane. */
  fallbackHost: string;
}

const READ_ONLY = new Set(['id', 'created_at', 'updated_at']);

/** A client field and its default, read from the spec's write schema (never restated here). */
interface Field {
  name: string;
  default: unknown;
}

function writeFields(spec: OpenAPIV3.Document, resource: ResourceName): Field[] {
  const schema = spec.components?.schemas?.[`${resource}Write`] as OpenAPIV3.SchemaObject;
  return Object.entries(schema.properties ?? {})
    .filter(([name]) => !READ_ONLY.has(name))
    .map(([name, prop]) => ({ name, default: (prop as OpenAPIV3.SchemaObject).default }));
}

/** A query parameter's default, from the (dereferenced) operation the request was routed to. */
function parameterDefault(operation: Context['operation'], name: string): number {
  const param = (operation.parameters as OpenAPIV3.ParameterObject[]).find((p) => p.name === name);
  return Number((param?.schema as OpenAPIV3.SchemaObject).default);
}

/** `2026-11-22 09:32:05.156`, the form both databases store and sort. */
function now(): string {
  return new Date().toISOString().replace('T', ' ').replace('Z', '');
}

function timestamp(value: unknown): string {
  return `${String(value).replace(' ', 'T')}Z`;
}

function decimal(value: unknown): string {
  return typeof value === 'number' ? value.toFixed(2) : String(value);
}

/** The six operations of one collection, as one generic pipeline driven by its declaration. */
export function recordHandlers<R extends ResourceName>(c: Collection<R>, deps: HandlerDeps): Record<Verb, Handler> {
  const { db } = deps;
  const fields = writeFields(deps.spec, c.resource);
  const decimals = new Set<string>(c.decimalFields);

  function serialize(row: Row): RecordOf<R> {
    const out: Record<string, unknown> = { id: Number(row.id) };
    for (const { name } of fields) out[name] = decimals.has(name) ? decimal(row[name]) : row[name];
    out.created_at = timestamp(row.created_at);
    out.updated_at = timestamp(row.updated_at);
    return out as RecordOf<R>;
  }

  /** Client fields of a body; with `defaults`, a field left out takes its default (create, PUT). */
  function values(body: Record<string, unknown>, defaults: boolean): Values {
    const out: Values = {};
    for (const f of fields) {
      if (body[f.name] !== undefined) out[f.name] = body[f.name];
      else if (defaults) out[f.name] = f.default ?? null;
    }
    return out;
  }

  function notFound(res: Response, id: string): void {
    sendProblem(res, 404, `No ${c.resource.toLowerCase()} with id ${id}`);
  }

  const recordPath = (id: number | string) => `/api/${c.name}/${id}/`;

  return {
    async list(ctx, req, res) {
      const query = ctx.request.query as { page?: number; page_size?: number; search?: string };
      const page = query.page ?? 1;
      const pageSize = query.page_size ?? parameterDefault(ctx.operation, 'page_size');
      const result = await listRecords(db, { table: c.name, searchFields: c.searchFields }, {
        terms: parseSearch(query.search ?? ''),
        page,
        pageSize,
      });
      if ('pastEnd' in result) {
        const last = Math.max(1, Math.ceil(result.count / pageSize));
        return sendProblem(res, 404, `Page ${page} is past the last page (${last})`);
      }
      const body = {
        count: result.count,
        next: page * pageSize < result.count ? pageUrl(req, page + 1, deps.fallbackHost) : null,
        previous: page > 1 ? pageUrl(req, page - 1, deps.fallbackHost) : null,
        results: result.rows.map(serialize),
      } as PageOf<R>;
      res.json(body);
    },

    async create(ctx, _req, res) {
      const stamp = now();
      const row = await insertRecord(db, c.name, { ...values(ctx.request.requestBody, true), created_at: stamp, updated_at: stamp });
      res.status(201).location(recordPath(row.id)).json(serialize(row));
    },

    async get(ctx, _req, res) {
      const row = await findRecord(db, c.name, Number(ctx.request.params.id));
      if (!row) return notFound(res, String(ctx.request.params.id));
      res.json(serialize(row));
    },

    async replace(ctx, _req, res) {
      const id = Number(ctx.request.params.id);
      const row = await updateRecord(db, c.name, id, { ...values(ctx.request.requestBody, true), updated_at: now() });
      if (!row) return notFound(res, String(id));
      res.json(serialize(row));
    },

    async update(ctx, _req, res) {
      const id = Number(ctx.request.params.id);
      const row = await updateRecord(db, c.name, id, { ...values(ctx.request.requestBody, false), updated_at: now() });
      if (!row) return notFound(res, String(id));
      res.json(serialize(row));
    },

    async delete(ctx, _req, res) {
      const id = Number(ctx.request.params.id);
      if (!(await deleteRecord(db, c.name, id))) return notFound(res, String(id));
      res.status(204).end();
    },
  };
}
