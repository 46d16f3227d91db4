import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, SetMatchType } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';
import { kindOfType, PROBLEM_TYPES } from '../../src/problems/types';
import { loadSpec } from '../../src/spec';

/**
 * Checks a response against the spec: its status must be documented for the operation, its
 * body must match the documented schema and its headers the documented headers. Responses to
 * requests that no operation takes (unknown paths, 405, 308) must be problems, or redirects.
 * Every problem must name one of the service's problem types (src/problems/types.ts), never
 * about:blank, with that type's status and title, and carry what the type says it carries.
 */
export interface SeenResponse {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  body: unknown;
}

let apiPromise: Promise<OpenAPIBackend> | undefined;

function contractApi(): Promise<OpenAPIBackend> {
  apiPromise ??= (async () => {
    const api = new OpenAPIBackend({
      definition: loadSpec(),
      strict: false,
      quick: false,
      ignoreTrailingSlashes: false,
      customizeAjv: (ajv) => {
        addFormats(ajv, { mode: 'full' });
        return ajv;
      },
    });
    await api.init();
    return api;
  })();
  return apiPromise;
}

/**
 * Compiles the contract's validators now. The first check otherwise compiles them in the middle
 * of a test, blocking the event loop that the app under test shares for seconds on a loaded
 * machine: long enough for its pool's acquire timers to expire and answer 503.
 */
export async function prepareContract(): Promise<void> {
  await contractApi();
}

const problemValidator = (() => {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile({ $ref: '#/components/schemas/Problem', components: loadSpec().components });
})();

/** Why a problem's body or headers break its type's entry in the table, if they do. */
export function problemTypeViolation(body: unknown, status: number, headers: Headers): string | undefined {
  const problem = body as { type?: unknown; title?: unknown; status?: unknown; errors?: unknown };
  const kind = kindOfType(problem?.type);
  if (!kind) return `type ${JSON.stringify(problem?.type)} is no problem type of src/problems/types.ts`;
  const entry = PROBLEM_TYPES[kind];
  if (entry.status !== status || problem.status !== status) return `${kind} is a ${entry.status}, answered with ${status}`;
  if (problem.title !== entry.title) return `${kind}'s title is ${JSON.stringify(entry.title)}, not ${JSON.stringify(problem.title)}`;
  if (problem.errors !== undefined && !(entry.fields as readonly string[]).includes('errors')) return `${kind} carries no errors`;
  const missing = entry.headers.filter((h) => !headers.get(h));
  if (missing.length) return `${kind} without ${missing.join(', ')}`;
  return undefined;
}

export async function assertMatchesContract(r: SeenResponse): Promise<void> {
  const api = await contractApi();
  const fail = (why: string) => {
    throw new Error(`${r.method} ${r.path} -> ${r.status}: ${why}\nbody: ${JSON.stringify(r.body)}`);
  };
  const contentType = r.headers.get('content-type') ?? '';
  if (r.status >= 400 && !contentType.startsWith('application/problem+json')) fail(`error with content-type ${contentType}`);
  if (r.status >= 400 && r.method !== 'HEAD') {
    const why = problemTypeViolation(r.body, r.status, r.headers);
    if (why) fail(why);
  }
  if (r.method === 'HEAD' && r.body !== '') fail('HEAD with a body');
  if (!r.headers.get('x-request-id')) fail('no X-Request-Id');
  if (r.status === 308) {
    if (!r.headers.get('location')) fail('redirect without Location');
    return;
  }
  // A CORS preflight is answered by the CORS layer, before any operation.
  if (r.method === 'OPTIONS' && r.status === 204) {
    if (!r.headers.get('access-control-allow-origin')) fail('preflight answer without Access-Control-Allow-Origin');
    return;
  }
  let operation = api.router.matchOperation({ method: r.method, path: r.path, headers: {} });
  if (!operation && r.status === 405) {
    // A 405 is documented on every operation of its path; check it against any of them.
    operation = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']
      .map((m) => api.router.matchOperation({ method: m, path: r.path, headers: {} }))
      .find(Boolean);
    if (!r.headers.get('allow')) fail('405 without Allow');
  }
  if (!operation) {
    // Under /api/ the token check and the rate limit come before routing, so that a client
    // without a token learns nothing about which paths exist.
    const allowed = r.path.startsWith('/api/') ? [401, 404, 429] : [404];
    if (!allowed.includes(r.status)) fail(`a path that no operation has must be ${allowed.join(' or ')}`);
    if (r.status === 401 && !r.headers.get('www-authenticate')) fail('401 without WWW-Authenticate');
    if (r.status === 429 && !r.headers.get('retry-after')) fail('429 without Retry-After');
    if (!problemValidator(r.body)) fail(`not a problem: ${JSON.stringify(problemValidator.errors)}`);
    return;
  }
  const documented = operation.responses?.[String(r.status)] as OpenAPIV3.ResponseObject | undefined;
  if (!documented) fail(`status ${r.status} is not documented for ${operation.operationId}`);
  // openapi-backend validates a body against the JSON media type only; a text media type that the
  // response declares (an export's NDJSON or CSV) must come as text.
  const media = contentType.split(';')[0].trim();
  const textMedia = media !== 'application/json' && !media.endsWith('+json') && documented?.content?.[media] !== undefined;
  if (textMedia && typeof r.body !== 'string') fail(`a ${media} body that is not text`);
  if (r.status !== 204 && r.method !== 'HEAD' && !textMedia) {
    const result = api.validateResponse(r.body, operation, r.status);
    if (result.errors?.length) fail(`body does not match the spec: ${JSON.stringify(result.errors)}`);
  }
  if (r.status === 204 && r.body !== '' && r.body !== undefined) fail('204 with a body');
  const headers: Record<string, string> = {};
  r.headers.forEach((value, name) => (headers[name] = value));
  for (const [name, header] of Object.entries(documented!.headers ?? {})) {
    if ((header as OpenAPIV3.HeaderObject).required && !r.headers.get(name)) fail(`required header ${name} is missing`);
  }
  const headerResult = api.validateResponseHeaders(headers, operation, { statusCode: r.status, setMatchType: SetMatchType.Any });
  if (headerResult.errors?.length) fail(`headers do not match the spec: ${JSON.stringify(headerResult.errors)}`);
}
