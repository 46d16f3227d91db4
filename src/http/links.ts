import { parse } from 'node:querystring';
import type { Request } from 'express';
import { sentTarget } from './target';

const SANE_HOST = /^[A-Za-z0-9.\-_~:[\]]{1,255}$/;

/**
 * The absolute URL of another page of the same list: the request's own URL with only `page`
 * (or `cursor`) changed, so every other query parameter is kept as the client sent it.
 */
export function pageUrl(req: Request, param: 'page' | 'cursor', value: string | number, fallbackHost: string): string {
  const host = req.get('host');
  const origin = `${req.protocol}://${host && SANE_HOST.test(host) ? host : fallbackHost}`;
  const { path, query } = sentTarget(req);
  // The parts are copied as sent, empty ones too, and the value is set where the parameter was
  // first: decoded and encoded again, `x=%FF` came back as U+FFFD; and Express reads the first
  // 1,000 parts only, so a part dropped or moved changed what a link asked for (a `page` moved
  // past them was not read, and `next` gave page 1).
  const set = `${param}=${encodeURIComponent(String(value))}`;
  let placed = false;
  const parts = (query ? query.split('&') : []).flatMap((part) => {
    if (nameOf(part) !== param) return [part];
    if (placed) return [];
    placed = true;
    return [set];
  });
  if (!placed) parts.push(set);
  return `${origin}${path}?${parts.join('&')}`;
}

/** A query part's parameter name as Express's query parser (node:querystring) reads it: `pag%65` is `page`. */
function nameOf(part: string): string | undefined {
  return Object.keys(parse(part))[0];
}
