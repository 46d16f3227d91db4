import type { KeyObject } from 'node:crypto';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';

/** Asymmetric algorithms only: a shared secret would let every verifier mint tokens too. */
export const JWT_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;

export interface JwtOptions {
  /** A public key (from PEM) or a key set (a local JWKS file): one of them. */
  key: { publicKey: KeyObject } | { jwks: JSONWebKeySet };
  issuer: string;
  audience: string;
  /** The claim that holds the scopes: a space-separated string (RFC 8693's `scope`) or an array. */
  scopesClaim: string;
  /** Seconds of clock difference allowed on exp and nbf. */
  clockSkewSeconds: number;
}

export interface JwtPrincipal {
  name: string;
  scopes: readonly string[];
}

const SUBJECT = /^[\x21-\x7e]{1,100}$/;

/**
 * Verifies a JWT with jose: signature by the configured key, one of JWT_ALGORITHMS (so `none`
 * and HMAC are refused), issuer, audience, exp (required) and nbf. Any failure is undefined:
 * the caller answers 401 without saying which check failed.
 */
export function jwtVerifier(options: JwtOptions): (token: string) => Promise<JwtPrincipal | undefined> {
  const key = 'jwks' in options.key ? createLocalJWKSet(options.key.jwks) : options.key.publicKey;
  const verifyOptions = {
    algorithms: [...JWT_ALGORITHMS],
    issuer: options.issuer,
    audience: options.audience,
    clockTolerance: options.clockSkewSeconds,
    requiredClaims: ['exp'],
  };
  return async (token) => {
    try {
      const { payload } =
        typeof key === 'function' ? await jwtVerify(token, key, verifyOptions) : await jwtVerify(token, key, verifyOptions);
      const claim = payload[options.scopesClaim];
      const scopes =
        typeof claim === 'string'
          ? claim.split(' ').filter(Boolean)
          : Array.isArray(claim)
            ? claim.filter((s) => typeof s === 'string')
            : [];
      // The subject goes to the access log: kept only when it is short printable ASCII.
      const subject = typeof payload.sub === 'string' && SUBJECT.test(payload.sub) ? payload.sub : 'unnamed';
      return { name: `jwt:${subject}`, scopes };
    } catch {
      return undefined;
    }
  };
}
