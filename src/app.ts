import express from 'express';
import type { Store } from 'express-rate-limit';
import addFormats from 'ajv-formats';
import { OpenAPIBackend } from 'openapi-backend';
import { authConfigured, createAuthenticator } from './auth';
import type { JwtOptions } from './auth/jwt';
import { authenticate, authorize } from './auth/middleware';
import { requiredScopes } from './auth/scopes';
import type { TokensFile } from './auth/tokensFile';
import { ConfigError } from './config';
import { type Db, isMysql, poolStats } from './db/connection';
import { createSearch, type Search } from './search';
import { listQueryErrors, operationHandlers } from './handlers';
import { serviceHandlers } from './handlers/service';
import { apiRateLimit, corsAllowed, corsFor, tokenRateLimit } from './http/access';
import { jsonBody } from './http/body';
import { dispatch } from './http/dispatch';
import { errorHandler } from './http/errors';
import { securityHeaders } from './http/headers';
import { hostRequired } from './http/host';
import { compileResponses } from './handlers/json';
import { createMetrics } from './http/metrics';
import { requestContext } from './http/requestContext';
import { routeTable } from './http/routes';
import { slashRedirect } from './http/slash';
import { type Logger, silentLogger } from './logger';
import { loadSpec, readSpecText } from './spec';

export interface AppOptions {
  db: Db;
  /** What answers lists with search terms (one per process: it holds the search limiter). Default: createSearch(). */
  search?: Search;
  bodyLimit: number;
  /** Host for absolute links when a request's Host header is missing or not allowed. */
  fallbackHost: string;
  /** PUBLIC_URL's origin: every absolute link starts with it. */
  publicUrl?: string;
  /** Host values that links may repeat besides loopback names (ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
  /** Request lines and unexpected errors (which never reach the client). Default: silent. */
  logger?: Logger;
  /** Bearer tokens that operations with a security requirement need; none: the API is open. */
  apiTokens?: readonly string[];
  /** Named tokens with scopes (TOKENS_FILE). */
  tokensFile?: TokensFile;
  /** JWT bearer tokens, verified with a configured key. */
  jwt?: JwtOptions;
  /** Requests a minute per token on /api/; undefined: unlimited. */
  tokenRateLimitPerMinute?: number;
  /** Where the per-token limit counts (Redis); default as for the per-address one. */
  tokenRateLimitStore?: Store;
  /** Origins browsers may call from (`*`: any); none: no CORS headers. */
  corsOrigins?: readonly string[];
  /** Requests a minute per client address on /api/; undefined: unlimited. */
  rateLimitPerMinute?: number;
  /** Where the rate limit counts (Redis); default: this process, or the primary's across workers. */
  rateLimitStore?: Store;
  /** Proxy hops whose X-Forwarded-For is believed for the client address (0: none). */
  trustProxy?: number;
}

/**
 * The service as one express app: request context, security headers, CORS, rate limit and token
 * (each before any body is read), the slash redirect, the JSON body, then the operation the spec
 * routes to; every failure on the way ends in the one error handler.
 */
export async function createApp(options: AppOptions): Promise<express.Express> {
  // One text: what routes and validates requests is what /openapi.* serves.
  const specText = readSpecText();
  const spec = loadSpec(specText);
  const logger = options.logger ?? silentLogger;
  const auth = { apiTokens: options.apiTokens, tokensFile: options.tokensFile, jwt: options.jwt };
  // Only MySQL limits costly search statements (src/search/limiter.ts).
  const search = options.search ?? createSearch();
  const metrics = createMetrics(() => poolStats(options.db), isMysql(options.db) ? () => search.stats() : undefined);

  const api = new OpenAPIBackend({
    // A copy: openapi-backend dereferences its definition in place.
    definition: structuredClone(spec),
    strict: true,
    // The document is linted in CI (Redocly, Spectral), so it is not validated again at every
    // start, and only request validators are compiled (below): response validators are for tests.
    // Both ran at start before and grew the heap past 90 MB for 30 MB that stays live.
    quick: true,
    validate: true,
    coerceTypes: true,
    ignoreTrailingSlashes: false,
    ajvOpts: { allErrors: true, verbose: true },
    customizeAjv: (ajv) => {
      addFormats(ajv, { mode: 'full' });
      return ajv;
    },
    handlers: {
      ...operationHandlers({
        db: options.db,
        search,
        spec,
        links: { publicUrl: options.publicUrl, allowedHosts: options.allowedHosts ?? [], fallbackHost: options.fallbackHost },
      }),
      ...serviceHandlers({ db: options.db, specText, specJson: JSON.stringify(spec), metrics: metrics.registry }),
    },
  });
  await api.init();
  const operations = api.router.getOperations();
  // openapi-backend would answer such an operation 500 at its first request; refuse to start.
  const unhandled = operations.map((o) => o.operationId ?? `${o.method.toUpperCase()} ${o.path}`).filter((id) => !api.handlers[id]);
  if (unhandled.length) {
    throw new ConfigError(
      `openapi/openapi.yaml has operations that no handler answers (${unhandled.join(', ')}): ` +
        'register them in src/handlers, then run npm run build',
    );
  }
  api.validator.preCompileRequestValidators();
  const routes = routeTable(operations);
  compileResponses(operations);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', options.trustProxy ?? 0);

  app.use(requestContext(routes, logger, metrics));
  app.use(securityHeaders('/docs'));
  app.use(hostRequired());
  if (options.corsOrigins?.length) app.use(corsFor(options.corsOrigins, corsAllowed(operations)));
  // Counted before the token check, so that guessing tokens is limited too.
  if (options.rateLimitPerMinute) app.use(apiRateLimit(options.rateLimitPerMinute, logger, options.rateLimitStore));
  if (authConfigured(auth)) {
    app.use(authenticate(createAuthenticator(auth)));
    if (options.tokenRateLimitPerMinute) app.use(tokenRateLimit(options.tokenRateLimitPerMinute, logger, options.tokenRateLimitStore));
    app.use(authorize(requiredScopes(operations)));
  }
  app.use(slashRedirect(routes));
  app.use(jsonBody(routes, options.bodyLimit));
  app.use(dispatch(api, listQueryErrors));
  app.use(errorHandler(logger, options.bodyLimit));
  return app;
}
