import type { Request } from 'express';

const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?]*/;

/**
 * The request target's path and query (after the first `?`) as the client sent them, without an
 * absolute form's scheme and host and without a fragment, which Express's parsers leave out too,
 * so nothing else may read it.
 */
export function sentTarget(req: Request): { path: string; query?: string } {
  const target = req.originalUrl.replace(ABSOLUTE_FORM, '').split('#', 1)[0] || '/';
  const q = target.indexOf('?');
  return q === -1 ? { path: target } : { path: target.slice(0, q), query: target.slice(q + 1) };
}
