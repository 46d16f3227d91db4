// The Records API's typed client: openapi-fetch typed by the types generated from the contract
// (src/generated/openapi.ts, which the build copies here), plus the bearer token header.
import createClient, { mergeHeaders, type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';

export type { components, operations, paths } from './generated/openapi.js';

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
