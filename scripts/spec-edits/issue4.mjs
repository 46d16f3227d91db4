#!/usr/bin/env node
// Issue 4's edits to openapi/openapi.yaml (access control, rate limits, request ids, metrics).
// They are a script, not a hand edit, so that they can be applied again on top of another
// branch's edits to the same operations:
//
//   git checkout <their branch> -- openapi/openapi.yaml
//   node scripts/spec-edits/issue4.mjs && npm run generate && npm run lint:spec
//
// Idempotent (a second run changes nothing), and it keeps the file's own formatting: every edit
// goes through the `yaml` package's document model, which round-trips this file byte for byte.
// `--check` changes nothing and exits 1 when the spec lacks any of the edits. A file name
// argument edits that file instead of openapi/openapi.yaml.
import { readFileSync, writeFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, Pair, parseDocument, Scalar, YAMLMap, YAMLSeq } from 'yaml';

// The spec to edit: openapi/openapi.yaml, or the file named on the command line.
const named = process.argv.slice(2).find((a) => !a.startsWith('--'));
const FILE = named ? new URL(named, `file://${process.cwd()}/`) : new URL('../../openapi/openapi.yaml', import.meta.url);
const LABEL = named ?? 'openapi/openapi.yaml';
const text = readFileSync(FILE, 'utf8');
const doc = parseDocument(text);
const render = (d) =>
  d.toString({ lineWidth: 0, flowCollectionPadding: true, singleQuote: true }).replace(/\[ ([^[\]\n]*) \]/g, '[$1]');
if (render(parseDocument(text)) !== text) console.warn('note: the spec does not round-trip byte for byte; review the diff');

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const REQUEST_ID = '#/components/headers/X-Request-Id';

// ---------------------------------------------------------------------------- node helpers

/** A YAML node for `value`: `$ref` objects and `{ ... }`-marked small objects are flow style. */
function node(value) {
  const n = doc.createNode(value);
  style(n);
  return n;
}

function style(n) {
  // Flow style where the file uses it: `{ $ref: ... }`, and small maps or lists of scalars.
  if (isMap(n) || isSeq(n)) {
    const children = isMap(n) ? n.items.map((p) => p.value) : n.items;
    const scalars = children.every((c) => isScalar(c) && !String(c.value).includes('\n'));
    n.flow = (isMap(n) && n.has('$ref')) || (scalars && children.length <= 6);
    for (const c of children) style(c);
  }
}

const ref = (target) => node({ $ref: target });

function key(name) {
  const k = new Scalar(name);
  if (/^[0-9]{3}$/.test(name)) k.type = Scalar.QUOTE_SINGLE;
  return k;
}

/** The map at `path`, created (at `index`, or at the end) when it is missing. */
function mapAt(parent, name, index) {
  const pair = parent.items.find((p) => p.key.value === name);
  if (pair && isMap(pair.value)) return pair.value;
  const m = new YAMLMap();
  if (pair) pair.value = m; // an empty `name:` is null
  else insert(parent, name, m, index);
  return m;
}

/** Sets `name` in `map` unless it is there; at `index` (or before the first of `before`), else at the end. */
function insert(map, name, value, index) {
  if (map.has(name)) return false;
  const pair = new Pair(key(name), value);
  let at = typeof index === 'number' ? index : -1;
  if (Array.isArray(index)) at = map.items.findIndex((p) => index.includes(p.key.value));
  if (at < 0 || at > map.items.length) map.items.push(pair);
  else map.items.splice(at, 0, pair);
  return true;
}

/** Inserts a response code in numeric order. */
function insertResponse(responses, code, value) {
  const at = responses.items.findIndex((p) => !/^[0-9]{3}$/.test(p.key.value) || Number(p.key.value) > Number(code));
  insert(responses, code, value, at);
}

function operations() {
  const out = [];
  for (const pathPair of doc.get('paths').items) {
    for (const opPair of pathPair.value.items) {
      if (METHODS.includes(opPair.key.value)) out.push({ path: pathPair.key.value, method: opPair.key.value, op: opPair.value });
    }
  }
  return out;
}

function editDescription(target, edit) {
  const scalar = target.get('description', true);
  const before = scalar.value;
  scalar.value = edit(before);
}

/** Inserts `addition` before the line starting with `anchor` unless `marker` is already there. */
function addBefore(textIn, anchor, addition, marker = addition) {
  if (textIn.includes(marker)) return textIn;
  const at = textIn.indexOf(anchor);
  if (at < 0) throw new Error(`anchor not found: ${anchor}`);
  return textIn.slice(0, at) + addition + textIn.slice(at);
}

function addAfterLine(textIn, lineStart, addition, marker = addition) {
  if (textIn.includes(marker)) return textIn;
  const at = textIn.indexOf(lineStart);
  if (at < 0) throw new Error(`line not found: ${lineStart}`);
  const end = textIn.indexOf('\n', at) + 1;
  return textIn.slice(0, end) + addition + textIn.slice(end);
}

// ---------------------------------------------------------------------------- components

const components = doc.get('components');

const schemes = mapAt(components, 'securitySchemes', 0);
insert(schemes, 'bearerAuth', node({
  type: 'http',
  scheme: 'bearer',
  description:
    'A token from the deployment\'s `API_TOKENS`, as `Authorization: Bearer <token>`. Required on every ' +
    '`/api/` operation when the deployment sets `API_TOKENS`; a deployment without it is open, and ignores ' +
    'the header.',
}));
const afterSchemes = components.items.findIndex((p) => p.key.value === 'securitySchemes') + 1;
components.items[afterSchemes].key.spaceBefore = true;

const parameters = components.get('parameters');
insert(parameters, 'RequestId', node({
  name: 'X-Request-Id',
  in: 'header',
  description:
    'A request id of the client\'s own, echoed back: up to 128 letters, digits and `.-_:`. Any other ' +
    'value is replaced by one the service makes (never rejected).',
  schema: { type: 'string', example: '3f1c9c1e-5d2a-4b8e-9a51-0c7e8f1d2b6a' },
}));

const headers = components.get('headers');
insert(headers, 'X-Request-Id', node({
  description: 'The request\'s id: the client\'s `X-Request-Id` when it is sane, else one the service made. The log line of the request carries it; error bodies repeat it as `request_id`.',
  schema: { type: 'string', example: '3f1c9c1e-5d2a-4b8e-9a51-0c7e8f1d2b6a' },
}));
insert(headers, 'WWW-Authenticate', node({
  description: 'The scheme to authenticate with (RFC 6750).',
  schema: { type: 'string', example: 'Bearer realm="records", error="invalid_token"' },
}));
insert(headers, 'RateLimit', node({
  description: 'What is left of this client\'s quota: `r` requests for `t` more seconds (IETF draft-ietf-httpapi-ratelimit-headers-08). Sent on every `/api/` response when the deployment sets `RATE_LIMIT_PER_MINUTE`.',
  schema: { type: 'string', example: '"per-minute"; r=0; t=42' },
}));
insert(headers, 'RateLimit-Policy', node({
  description: 'The quota: `q` requests a window of `w` seconds, per client address.',
  schema: { type: 'string', example: '"per-minute"; q=100; w=60; pk=:ZTNiMGM0NDI5OGZj:' },
}));

const responses = components.get('responses');
const problemContent = (example) => ({
  'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' }, example },
});
insert(responses, 'Unauthorized', node({
  description: 'The deployment requires a bearer token (`API_TOKENS`) and the request has none, or a wrong one.',
  headers: { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } },
  content: problemContent({ type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'A valid bearer token is required' }),
}), ['Conflict']);
insert(responses, 'TooManyRequests', node({
  description: 'This client has used its quota (`RATE_LIMIT_PER_MINUTE`); try again after `Retry-After` seconds.',
  headers: {
    'Retry-After': { $ref: '#/components/headers/Retry-After' },
    RateLimit: { $ref: '#/components/headers/RateLimit' },
    'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
  },
  content: problemContent({ type: 'about:blank', title: 'Too Many Requests', status: 429, detail: 'Too many requests; try again in 42 seconds' }),
}), ['ServiceUnavailable']);
editDescription(responses.get('ServiceUnavailable'), (d) =>
  d.includes('query timeout') ? d : d.replace('The database cannot be reached.', 'The database cannot be reached, or did not answer within the query timeout.'));

// Every response carries X-Request-Id: shared responses get it once, inline ones each.
function withRequestId(response) {
  if (response.has('$ref')) return;
  const h = mapAt(response, 'headers', response.items.findIndex((p) => p.key.value === 'description') + 1);
  insert(h, 'X-Request-Id', ref(REQUEST_ID));
}
for (const p of responses.items) withRequestId(p.value);

const problem = components.get('schemas').get('Problem').get('properties');
insert(problem, 'request_id', node({
  type: 'string',
  description: 'The request\'s `X-Request-Id`, to quote when reporting the problem.',
  example: '3f1c9c1e-5d2a-4b8e-9a51-0c7e8f1d2b6a',
}), ['errors']);

// ---------------------------------------------------------------------------- paths

const paths = doc.get('paths');
insert(paths, '/metrics', node({
  get: {
    operationId: 'getMetrics',
    tags: ['service'],
    summary: 'Metrics',
    description:
      'Prometheus text format: `http_requests_total` by `operation_id` and `status`, the ' +
      '`http_request_duration_seconds` histogram by `operation_id`, the database pool ' +
      '(`db_pool_connections_in_use`, `db_pool_acquires_waiting`, ...) and the process\'s own.',
    responses: {
      200: {
        description: 'The metrics.',
        content: { 'text/plain': { schema: { type: 'string' }, example: 'http_requests_total{operation_id="listBooks",status="200"} 42\n' } },
      },
      405: { $ref: '#/components/responses/MethodNotAllowed' },
    },
  },
}));

for (const { path, op } of operations()) {
  const isApi = path.startsWith('/api/');
  if (!isApi) insert(op, 'security', node([]), ['parameters', 'requestBody', 'responses']);
  const params = op.get('parameters', true) ?? (() => {
    const seq = new YAMLSeq();
    insert(op, 'parameters', seq, ['requestBody', 'responses']);
    return seq;
  })();
  if (!params.items.some((p) => p.get?.('$ref') === '#/components/parameters/RequestId')) {
    const item = ref('#/components/parameters/RequestId');
    item.flow = false;
    params.items.push(item);
  }
  const opResponses = op.get('responses');
  if (isApi) {
    insertResponse(opResponses, '401', ref('#/components/responses/Unauthorized'));
    insertResponse(opResponses, '429', ref('#/components/responses/TooManyRequests'));
  }
  for (const p of opResponses.items) withRequestId(p.value);
}

// ---------------------------------------------------------------------------- top level

const security = doc.get('security', true);
if (isSeq(security) && security.items.length === 0) {
  const required = node([{ bearerAuth: [] }]);
  required.flow = false;
  required.items[0].flow = false;
  doc.set('security', required);
}

for (const tag of doc.get('tags').items) {
  if (tag.get('name') === 'service') {
    editDescription(tag, (d) => (d.includes('metrics') ? d : d.replace('health checks for orchestrators', 'health checks and metrics for orchestrators')));
  }
}

editDescription(doc.get('info'), (d) => {
  d = addAfterLine(d, '| 400 |', '| 401 | a bearer token is required (the deployment sets `API_TOKENS`) and is missing or wrong |\n');
  d = addAfterLine(d, '| 415 |', '| 429 | this client has used its quota (`RATE_LIMIT_PER_MINUTE`); retry after `Retry-After` seconds |\n');
  d = d.replace('| 503 | the database cannot be reached; retry', '| 503 | the database cannot be reached or did not answer in time; retry');
  return addBefore(d, '## Example', [
    '## Access, limits and request ids',
    '',
    'A deployment that sets `API_TOKENS` requires `Authorization: Bearer <token>` on every `/api/`',
    'request; a missing or wrong token is `401` with `WWW-Authenticate: Bearer`. Without it the API',
    'is open. `/healthz`, `/readyz`, `/metrics`, `/docs` and `/openapi.*` are always open.',
    '',
    'A deployment that sets `RATE_LIMIT_PER_MINUTE` gives each client address that many `/api/`',
    'requests a minute; every `/api/` response then carries `RateLimit` and `RateLimit-Policy`, and',
    'a request past the quota is `429` with `Retry-After`. Browsers may call the API from the',
    'origins in `CORS_ORIGINS` only.',
    '',
    'Every response carries `X-Request-Id`: the client\'s own when it is sane, else one the service',
    'made. Error bodies repeat it as `request_id`, so that a problem can be quoted and found in the',
    'service log.',
    '',
    '',
  ].join('\n'), '## Access, limits and request ids');
});

const result = render(doc);
if (process.argv.includes('--check')) {
  console.log(result === text ? `${LABEL} has the issue 4 edits` : `${LABEL} lacks some issue 4 edits: run node scripts/spec-edits/issue4.mjs`);
  process.exit(result === text ? 0 : 1);
}
if (result !== text) writeFileSync(FILE, result);
console.log(`${LABEL}: issue 4 edits ${result === text ? 'already applied' : 'applied'}`);
