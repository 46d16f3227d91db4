import type { components } from '../generated/openapi';

/** A member of a problem body beyond type, title, status, detail and request_id. */
export type ProblemField = 'errors';
/** A header that every problem of a kind carries. */
export type ProblemHeader = 'Retry-After' | 'Allow' | 'WWW-Authenticate';

export interface ProblemType {
  status: number;
  /** The same for every problem of the kind (RFC 9457's `title`); `detail` says what happened this time. */
  title: string;
  /** One paragraph, for the kind's page (`GET /problems/{kind}`). */
  description: string;
  /** Members that a problem of the kind may carry. */
  fields: readonly ProblemField[];
  /** Headers that every problem of the kind carries. */
  headers: readonly ProblemHeader[];
}

const kind = (status: number, title: string, description: string, fields: ProblemField[] = [], headers: ProblemHeader[] = []) => ({
  status,
  title,
  description,
  fields,
  headers,
});

/**
 * Every kind of problem the service answers, each with its status: a problem's `type` is
 * `/problems/<kind>`, a relative URI reference that the service answers with the kind's page, so
 * that a client tells problems apart by it, never by their prose. The spec's `ProblemKind` enum
 * lists the same kinds (checked at compile time below, and by tests/unit/problems.test.ts, which
 * also holds the table in its description to this one). See docs/adr/0024-problem-types.md.
 */
export const PROBLEM_TYPES = {
  validation: kind(
    400,
    'Invalid request',
    'A body field, a query parameter or a header breaks the contract: a wrong type, a value out of bounds, a field missing or unknown, text that is not well-formed Unicode, an altered cursor, a filter bound above its upper one. `errors` names every field or parameter at fault, with what it must be. Nothing was changed; fix the request before sending it again.',
    ['errors'],
  ),
  'malformed-body': kind(
    400,
    'Malformed request body',
    'The request body cannot be read as JSON: it is empty, it is not JSON, it is not UTF-8, it does not decode by its `Content-Encoding`, or an object in it has the same key twice (`errors` names the key, or `body`). Nothing was changed.',
    ['errors'],
  ),
  'malformed-precondition': kind(
    400,
    'Malformed precondition',
    'A write carries `If-Match` or `If-None-Match` that is not `*` or a comma-separated list of entity tags (`"3"`, `W/"3"`). It names no version, so it is refused rather than taken for someone else\'s edit; `errors` names the header. Nothing was changed.',
    ['errors'],
  ),
  'bad-framing': kind(
    400,
    'Bad message framing',
    'The request is not HTTP/1.1 that every reader frames alike: it does not parse, its chunked body does not parse, it applies `chunked` more than once, or it is HTTP/1.0 with `Transfer-Encoding`. A proxy in front could read another request from the same bytes, so the service reads none; the connection closes.',
  ),
  'duplicate-header': kind(
    400,
    'Header given twice',
    'The request carries `Host`, `Authorization`, `Content-Type` or `Idempotency-Key` more than once. The service and a proxy in front could each read another one, so the request is refused before anything reads it.',
  ),
  'host-required': kind(400, 'Host header required', 'An HTTP/1.1 request must carry a `Host` header (RFC 9112); this one has none.'),
  'incomplete-request': kind(
    400,
    'Incomplete request',
    'The request ended before its body did: the client closed its side of the connection, or sent fewer bytes than its `Content-Length` said. Nothing was changed.',
  ),
  'token-missing': kind(
    401,
    'Bearer token required',
    'The deployment requires `Authorization: Bearer <token>` on every `/api/` request (it sets `API_TOKENS`, `TOKENS_FILE` or JWT keys), and the request carries none. `WWW-Authenticate` names the scheme.',
    [],
    ['WWW-Authenticate'],
  ),
  'token-invalid': kind(
    401,
    'Invalid bearer token',
    'The bearer token is not one the deployment knows: unknown, expired, not yet valid, or not signed by the configured key. `WWW-Authenticate` says `error="invalid_token"`.',
    [],
    ['WWW-Authenticate'],
  ),
  'scope-missing': kind(
    403,
    'Scope missing',
    'The token is valid but lacks a scope that the operation needs (`<collection>:read` or `<collection>:write`); `errors` names each scope missing, and so does `WWW-Authenticate` (`error="insufficient_scope"`). Nothing was read or changed.',
    ['errors'],
    ['WWW-Authenticate'],
  ),
  'route-not-found': kind(404, 'No such path', 'No operation of the contract has this path. Paths under `/api/` end with a slash.'),
  'not-found': kind(
    404,
    'Not found',
    'The path names something that does not exist: a record (its id names none, or is not a positive integer), a problem type, or the API reference before it is built. In a bulk delete, `errors` names each id that names no record, and nothing was deleted.',
    ['errors'],
  ),
  'page-not-found': kind(404, 'Page past the end', 'The list has fewer pages than `page` asks for; page 1 of an empty list is a `200`.'),
  'method-not-allowed': kind(405, 'Method not allowed', 'The path does not have this method; `Allow` lists those it has.', [], ['Allow']),
  'not-acceptable': kind(
    406,
    'Not acceptable',
    "An export is `application/x-ndjson` or `text/csv`, and the request's `Accept` names neither (nor `*/*`).",
  ),
  'request-timeout': kind(
    408,
    'Request timeout',
    "The request's headers did not arrive within 60 seconds, or the whole request within 5 minutes; the connection closes.",
  ),
  unique: kind(
    409,
    'Unique value taken',
    'A unique field (`books.isbn`, `users.username`, `users.email`) already has this value in another record; in a bulk create, in a stored record or in one earlier in the batch. `errors` names the field (`[index].field` in a bulk create). Nothing was changed.',
    ['errors'],
  ),
  'idempotency-in-flight': kind(
    409,
    'Idempotent request still running',
    'A request with the same `Idempotency-Key` and body, from the same caller, is still running. Retry after `Retry-After` seconds: once the first is done, its answer is replayed. `errors` names the header.',
    ['errors'],
    ['Retry-After'],
  ),
  'stale-etag': kind(
    412,
    'Stale ETag',
    "The write's `If-Match` names none of the record's current versions: someone else changed or deleted the record since it was read. Nothing was changed; read the record again and decide anew.",
  ),
  'etag-matched': kind(
    412,
    'ETag matched',
    "The write's `If-None-Match` names the record's current version (`*` names every version), so the write does not apply. Nothing was changed.",
  ),
  'body-too-large': kind(
    413,
    'Request body too large',
    "The request body is larger than the deployment's limit (`BODY_LIMIT`, 1 MiB unless configured).",
  ),
  'unsupported-media-type': kind(
    415,
    'Unsupported media type',
    'A `POST`, `PUT` or `PATCH` body must be `application/json` in UTF-8; this one is another media type or charset, or has none.',
  ),
  'expectation-failed': kind(
    417,
    'Expectation failed',
    "The request's `Expect` names something other than `100-continue`, the only expectation the service meets.",
  ),
  'idempotency-mismatch': kind(
    422,
    'Idempotency key reused',
    'This `Idempotency-Key` was used, by the same caller and on the same collection, with another request body. Nothing was created; a new request needs a new key. `errors` names the header.',
    ['errors'],
  ),
  'rate-limited': kind(
    429,
    'Rate limited',
    "The client used its quota of `/api/` requests (`RATE_LIMIT_PER_MINUTE` per address, or a token's own). Retry after `Retry-After` seconds.",
    [],
    ['Retry-After'],
  ),
  'headers-too-large': kind(
    431,
    'Request headers too large',
    'The request line and headers are larger than 16 KiB; the connection closes.',
  ),
  internal: kind(
    500,
    'Internal error',
    'Something failed that the service did not expect. The body carries no stack trace or SQL; the service log has them, under the `request_id`.',
  ),
  'transfer-coding-not-implemented': kind(
    501,
    'Transfer coding not implemented',
    "The request's `Transfer-Encoding` names a coding other than `chunked`, the only one the service implements; the connection closes.",
  ),
  'database-unavailable': kind(
    503,
    'Database unavailable',
    'The database cannot be reached (on SQLite, its file cannot be opened, read or written, or its disk is full), or kept refusing a write that conflicted with one on another cluster node. Retry after `Retry-After` seconds. Nothing was changed, unless the connection was lost while a write committed; a create sent with an `Idempotency-Key` can always be sent again.',
    [],
    ['Retry-After'],
  ),
  'database-timeout': kind(
    503,
    'Database timeout',
    'The database did not answer within the query timeout, no connection to it came free in time, or a costly search waited for its turn past it. Retry after `Retry-After` seconds. Nothing was changed, as for `database-unavailable`.',
    [],
    ['Retry-After'],
  ),
  'http-version': kind(505, 'HTTP version not supported', 'The service speaks HTTP/1.1 and HTTP/1.0 only.'),
} as const satisfies Record<string, ProblemType>;

export type ProblemKind = keyof typeof PROBLEM_TYPES;

/** Every kind, in the table's order (the spec's enum has the same order). */
export const PROBLEM_KINDS = Object.keys(PROBLEM_TYPES) as ProblemKind[];

/** A problem's `type`: resolved against the service's origin, it is the kind's page. */
export const problemType = (kind: ProblemKind): string => `/problems/${kind}`;

/** The kind a `type` names, if it names one. */
export function kindOfType(type: unknown): ProblemKind | undefined {
  const m = typeof type === 'string' ? /^\/problems\/([a-z-]+)$/.exec(type) : null;
  return m && Object.hasOwn(PROBLEM_TYPES, m[1]) ? (m[1] as ProblemKind) : undefined;
}

// The table and the spec's enum name the same kinds, both ways, at compile time.
type SpecKind = components['schemas']['ProblemKind'];
type Assert<T extends true> = T;
export type TableHasSpecKinds = Assert<SpecKind extends ProblemKind ? true : false>;
export type SpecHasTableKinds = Assert<ProblemKind extends SpecKind ? true : false>;
