import type { Request } from 'express';

const SANE_HOST = /^[A-Za-z0-9.\-_~:[\]]{1,255}$/;
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?]*/;

/**
 * The absolute URL of another page of the same list: the request's own URL with only `page`
 * (or `cursor`) changed, so every other query parameter is kept as the client sent it.
 */
export function pageUrl(req: Request, param: 'page' | 'cursor', value: string | number, fallbackHost: string): string {
  const host = req.get('host');
  const origin = `${req.protocol}://${host && SANE_HOST.test(host) ? host : fallbackHost}`;
  // A request line in absolute form (`GET http://host/api/posts/`, as proxies send) carries a
  // scheme and host before the path: the link takes the path and query only.
  // A `#` and what follows it is a fragment, which the query parser leaves out (clients never
  // send one, but Node takes it): copied, it became part of the link's last parameter.
  const target = req.originalUrl.replace(ABSOLUTE_FORM, '').split('#', 1)[0] || '/';
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  // The others are copied as sent, not decoded and encoded again: a value that is not UTF-8
  // (`x=%FF`) came back as U+FFFD (`x=%EF%BF%BD`), another value than the client's.
  const kept = (q === -1 ? '' : target.slice(q + 1)).split('&').filter((part) => part !== '' && nameOf(part) !== param);
  return `${origin}${path}?${[...kept, `${param}=${encodeURIComponent(String(value))}`].join('&')}`;
}

/** A query part's parameter name, decoded as the query parser decodes it (`pag%65` is `page`). */
function nameOf(part: string): string | undefined {
  return new URLSearchParams(part).keys().next().value;
}
