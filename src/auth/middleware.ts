import type { NextFunction, Request, Response } from 'express';
import type { Operation } from 'openapi-backend';
import { HttpProblem } from '../problems';
import type { Authenticator, Principal } from '.';
import { grants } from './scopes';

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

/** The principal that `authenticate` found, on `res.locals` for the rate limit, scopes and log. */
export const principalOf = (res: Response): Principal | undefined => res.locals.principal as Principal | undefined;

/**
 * Requires a valid bearer token on every operation whose security names a scheme, and on every
 * /api/ path with no operation, so unknown paths cannot be probed: missing or unknown is 401.
 */
export function authenticate(authenticator: Authenticator): Middleware {
  return (req, res, next) => {
    const operation = res.locals.operation as Operation | undefined;
    const security = operation?.security ?? [];
    const required = operation ? security.some((r) => Object.keys(r).length > 0) : req.path.startsWith('/api/');
    if (!required) return next();
    authenticator.authenticate(req.get('authorization')).then((result) => {
      if (result.kind === 'ok') {
        res.locals.principal = result.principal;
        res.locals.authenticated = true;
        return next();
      }
      next(unauthorized(result.kind === 'invalid'));
    }, next);
  };
}

function unauthorized(badToken: boolean): HttpProblem {
  return new HttpProblem(
    badToken ? 'token-invalid' : 'token-missing',
    badToken ? 'The bearer token is not valid' : 'This API requires Authorization: Bearer <token>',
    undefined,
    {
      'WWW-Authenticate': badToken ? 'Bearer realm="records", error="invalid_token"' : 'Bearer realm="records"',
    },
  );
}

/**
 * 403 when the token lacks a scope that the operation's x-required-scopes lists (`required`,
 * read from the spec once), naming the scopes it needed (RFC 6750's insufficient_scope).
 */
export function authorize(required: ReadonlyMap<string, readonly string[]>): Middleware {
  return (_req, res, next) => {
    const principal = principalOf(res);
    const operation = res.locals.operation as Operation | undefined;
    const needed = operation ? required.get(operation.operationId ?? '') : undefined;
    if (!principal || !needed) return next();
    const missing = needed.filter((s) => !grants(principal.scopes, s));
    if (!missing.length) return next();
    const list = missing.join(' ');
    next(
      new HttpProblem(
        'scope-missing',
        `This token lacks the scope ${missing.join(', ')} that ${operation?.operationId} needs`,
        missing.map((s) => ({ field: 'Authorization', message: `needs the scope ${s}` })),
        { 'WWW-Authenticate': `Bearer realm="records", error="insufficient_scope", scope="${list}"` },
      ),
    );
  };
}
