// The Records API's typed client: openapi-fetch typed by the types generated from the contract
// (src/generated/openapi.ts, which the build copies here), plus the bearer token header, and the
// contract's problem kinds (src/generated/problems.ts, which the build writes from its ProblemKind).
import createClient, { mergeHeaders, type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './generated/openapi.js';
import { problemKinds } from './generated/problems.js';

export type { components, operations, paths } from './generated/openapi.js';
export { problemKinds };

export interface RecordsClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The service's origin, e.g. `http://127.0.0.1:3000`; every path starts with `/api/`. */
  baseUrl: string;
  /** A bearer token, sent as `Authorization: Bearer <token>` with every request. */
  token?: string;
}

export type RecordsClient = Client<paths>;

/** An openapi-fetch client typed for every operation of the contract. */
export function createRecordsClient({ token, headers, ...options }: RecordsClientOptions): RecordsClient {
  // A default header, so that one given with a single request (or `null`, to drop it) wins.
  const withToken = token ? mergeHeaders(headers, { Authorization: `Bearer ${token}` }) : headers;
  return createClient<paths>({ ...options, headers: withToken });
}

/** An `application/problem+json` answer (RFC 9457): every error the service gives. */
export type Problem = components['schemas']['Problem'];
/** What kind of problem it is: `unique`, `stale-etag`, `scope-missing`, ... (`problemKinds` lists them). */
export type ProblemKind = components['schemas']['ProblemKind'];

/** True when `value` has a problem's `type`, `title` and `status`: an `error` of the client, say. */
export function isProblem(value: unknown): value is Problem {
  if (typeof value !== 'object' || value === null) return false;
  const { type, title, status } = value as Record<string, unknown>;
  return typeof type === 'string' && typeof title === 'string' && typeof status === 'number';
}

const TYPE = /^(?:https?:\/\/[^/?#]+)?\/problems\/([a-z-]+)$/;

/**
 * The kind that a problem's `type` names (`/problems/unique`, or that URL resolved against the
 * service: `unique`), to `switch` on. Undefined for anything else: a value that is no problem,
 * `about:blank` from a proxy in front of the service, or a kind newer than this package (tell
 * those apart by `status`).
 */
export function problemKind(problem: unknown): ProblemKind | undefined {
  if (!isProblem(problem)) return undefined;
  const kind = TYPE.exec(problem.type)?.[1];
  return (problemKinds as readonly string[]).includes(kind ?? '') ? (kind as ProblemKind) : undefined;
}
