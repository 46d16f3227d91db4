import type { ErrorObject } from 'ajv';
import type { Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import type { FieldError } from '../problems';

/**
 * Turns openapi-backend's ajv errors into one entry per problem, each naming the body field or
 * the query or path parameter as a client knows it (`title`, `page`, `id`), never ajv's paths.
 */
export function fieldErrors(errors: readonly ErrorObject[]): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of errors) {
    const entry = fieldError(e);
    const key = `${entry.field}\u0000${entry.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(entry);
    }
  }
  return out;
}

/** True when every error is about a path parameter: the contract answers those with 404. */
export function onlyPathErrors(errors: readonly ErrorObject[]): boolean {
  return errors.length > 0 && errors.every((e) => e.instancePath.startsWith('/path/'));
}

/**
 * A body field as clients write it: `title`, `[3].title` in an array body, `ids[2]`. A property
 * name that looks like a number (`"9"`) is still a name when the caller says the last one is.
 */
export function fieldPath(segments: readonly string[], lastIsProperty = false): string {
  const last = segments.length - 1;
  return segments.map((s, i) => (/^(0|[1-9][0-9]*)$/.test(s) && !(lastIsProperty && i === last) ? `[${s}]` : i ? `.${s}` : s)).join('');
}

function fieldError(e: ErrorObject): FieldError {
  const segments = e.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const [where, ...rest] = segments;
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required') {
    if (params.missingProperty === 'requestBody') return { field: 'body', message: 'a JSON request body is required' };
    return { field: fieldPath([...rest, String(params.missingProperty)], true), message: 'is required' };
  }
  if (e.keyword === 'additionalProperties') {
    return { field: fieldPath([...rest, String(params.additionalProperty)], true), message: 'is not a field of this resource' };
  }
  // A parameter is named as such (`ordering`, not `ordering.0` for its first item); a body field
  // by its path.
  const inBody = where === 'requestBody' || !where;
  // openapi-backend lower-cases header names; a client knows them as the spec writes them.
  const param =
    where === 'header' && rest[0] ? rest[0].replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase()) : rest[0];
  const field = inBody ? fieldPath(rest) || 'body' : (param ?? where);
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'enum') {
    // ajv's `data` (verbose mode) is the offending value: name it, as a user would look for it.
    message = `${JSON.stringify(e.data)} is not one of: ${(params.allowedValues as unknown[]).join(', ')}`;
  }
  return { field, message };
}

/** Deeper than any body the spec admits (records are flat); deeper bodies are refused unwalked. */
const MAX_DEPTH = 32;

const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

/**
 * Strings that JSON admits but UTF-8 cannot store (lone surrogates) would be silently replaced
 * by the database; they are rejected instead, naming the field. So is NUL, which the contract
 * bars from text: it ends strings in C-based tools and drivers that records are exported to.
 * Walks without recursion, so a body nested 200,000 deep is a 400, not a stack overflow.
 */
export function malformedStrings(body: unknown): FieldError[] {
  const errors: FieldError[] = [];
  // `field` is rendered as it goes: only the walk knows an array index from a key named "9".
  const stack: { value: unknown; field: string; top: string; depth: number }[] = [{ value: body, field: '', top: '', depth: 0 }];
  while (stack.length) {
    const { value, field, top, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const name = field || 'body';
      if (!value.isWellFormed()) errors.push({ field: name, message: 'must be well-formed Unicode (no lone surrogates)' });
      else if (value.includes('\u0000')) errors.push({ field: name, message: NUL_MESSAGE });
    } else if (value && typeof value === 'object') {
      if (depth >= MAX_DEPTH) return [{ field: top || 'body', message: `is nested more than ${MAX_DEPTH} levels deep` }];
      const array = Array.isArray(value);
      for (const [key, child] of Object.entries(value)) {
        const step = array ? `[${key}]` : field ? `.${key}` : key;
        stack.push({ value: child, field: field + step, top: top || step, depth: depth + 1 });
      }
    }
  }
  return errors.reverse();
}

const INTEGER = /^-?[0-9]+$/;
/** A path's integer as the service writes it: `01` would be a second URL of record 1. */
const CANONICAL_INTEGER = /^(0|-?[1-9][0-9]*)$/;

/**
 * The query as the operation declares it, and its loose integers. Unknown query parameters are
 * ignored (they stay in `next`/`previous` links, which copy the request's own query). ajv
 * coerces `0x10`, `1e1` and ` 5` to integers; the contract wants plain decimal digits, so a loose
 * path parameter is `'path'` (the contract's 404) and loose query parameters are listed.
 */
export function operationParams(
  operation: Operation,
  params: Record<string, string>,
  query: Record<string, unknown>,
  rawQuery = '',
): { query: Record<string, string | string[]>; loose: FieldError[] | 'path' } {
  const declared: Record<string, string | string[]> = {};
  const parameters = (operation.parameters ?? []) as OpenAPIV3.ParameterObject[];
  const loose = malformedQuery(rawQuery, new Set(parameters.filter((p) => p.in === 'query').map((p) => p.name)));
  for (const p of parameters) {
    const raw = p.in === 'path' ? params[p.name] : query[p.name];
    if (p.in === 'query' && raw !== undefined) declared[p.name] = raw as string | string[];
    if ((p.schema as OpenAPIV3.SchemaObject | undefined)?.type !== 'integer') continue;
    if (loose.some((e) => e.field === p.name)) continue;
    if (p.in === 'path' && typeof raw === 'string' && !CANONICAL_INTEGER.test(raw)) return { query: declared, loose: 'path' };
    if (typeof raw !== 'string' || INTEGER.test(raw)) continue;
    loose.push({ field: p.name, message: 'must be integer' });
  }
  return { query: declared, loose };
}

/** Percent-decoding that fails on bytes that are not UTF-8; a `%` without two hex digits is literal. */
function decodeStrict(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' ').replace(/%(?![0-9a-fA-F]{2})/g, '%25'));
  } catch {
    return undefined;
  }
}

/**
 * The query parser turns percent-encoded bytes that are not UTF-8 (an encoded unpaired surrogate,
 * `%FF`) into U+FFFD, so a search would quietly look for something else; the raw query is read
 * instead, and such a parameter, or one that holds NUL, is listed by name.
 */
export function malformedQuery(rawQuery: string, names: ReadonlySet<string>): FieldError[] {
  const out: FieldError[] = [];
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    const name = decodeStrict(eq === -1 ? pair : pair.slice(0, eq));
    if (name === undefined || !names.has(name) || out.some((e) => e.field === name)) continue;
    const value = decodeStrict(eq === -1 ? '' : pair.slice(eq + 1));
    if (value === undefined) out.push({ field: name, message: 'must be percent-encoded UTF-8' });
    else if (value.includes('\u0000')) out.push({ field: name, message: NUL_MESSAGE });
  }
  return out;
}
