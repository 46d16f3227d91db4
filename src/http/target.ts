import type { Request } from 'express';

const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?]*/;

/**
 * The request target's path and query as the client sent them (the query after the first `?`;
 * undefined when there is none). Without the scheme and host of a request line in absolute form
 * (`GET http://host/api/posts/`, as proxies send), and without a fragment: clients never send
 * one, but Node takes it, and Express's path and query parsers leave it out, so nothing else may
 * read it (a `#%FF` was a 400, a `page_size=1#frag` went into the next link).
 */
export function sentTarget(req: Request): { path: string; query?: string } {
  const target = req.originalUrl.replace(ABSOLUTE_FORM, '').split('#', 1)[0] || '/';
  const q = target.indexOf('?');
  return q === -1 ? { path: target } : { path: target.slice(0, q), query: target.slice(q + 1) };
}
