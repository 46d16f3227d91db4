import { createHash, timingSafeEqual } from 'node:crypto';
import { type JwtOptions, jwtVerifier } from './jwt';
import { isFileToken, tokenMatcher, type TokensFile } from './tokensFile';

/** Who a request is, as the access log names it, and the scopes its token holds. */
export interface Principal {
  name: string;
  scopes: ReadonlySet<string>;
}

export type Authentication = { kind: 'missing' } | { kind: 'invalid' } | { kind: 'ok'; principal: Principal };

/** Given a request's Authorization header: who it is and what scopes it holds. */
export interface Authenticator {
  authenticate(authorization: string | undefined): Promise<Authentication>;
}

export interface AuthSources {
  /** API_TOKENS: full access, named `api-token-<n>` in the log. */
  apiTokens?: readonly string[];
  /** TOKENS_FILE, parsed. */
  tokensFile?: TokensFile;
  jwt?: JwtOptions;
}

/** Every scope a full-access token holds. */
export const FULL_ACCESS: readonly string[] = ['*:read', '*:write'];

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const digest = (token: string) => createHash('sha256').update(token).digest();

/** Whether any source is configured: without one, the API is open. */
export function authConfigured(sources: AuthSources): boolean {
  return Boolean(sources.apiTokens?.length || sources.tokensFile || sources.jwt);
}

/**
 * One authenticator over every configured source; a token is tried by its shape: `rt_...`
 * against the tokens file, three dot-separated parts as a JWT, anything else against
 * API_TOKENS (SHA-256 digests compared in constant time, all of them).
 */
export function createAuthenticator(sources: AuthSources): Authenticator {
  const fileMatch = sources.tokensFile ? tokenMatcher(sources.tokensFile) : undefined;
  const verifyJwt = sources.jwt ? jwtVerifier(sources.jwt) : undefined;
  const known = (sources.apiTokens ?? []).map(digest);
  const fullAccess = new Set(FULL_ACCESS);

  function staticToken(token: string): Principal | undefined {
    const given = digest(token);
    let index = -1;
    known.forEach((k, i) => {
      if (timingSafeEqual(given, k) && index < 0) index = i;
    });
    return index < 0 ? undefined : { name: `api-token-${index + 1}`, scopes: fullAccess };
  }

  return {
    async authenticate(authorization) {
      const m = BEARER.exec(authorization ?? '');
      if (!m) return { kind: 'missing' };
      const token = m[1];
      let principal: Principal | undefined;
      if (fileMatch && isFileToken(token)) {
        const found = fileMatch(token);
        if (found) principal = { name: found.name, scopes: new Set(found.scopes) };
      } else if (verifyJwt && JWT_SHAPE.test(token)) {
        const found = await verifyJwt(token);
        if (found) principal = { name: found.name, scopes: new Set(found.scopes) };
      } else {
        principal = staticToken(token);
      }
      return principal ? { kind: 'ok', principal } : { kind: 'invalid' };
    },
  };
}
