import type { Request } from 'express';

const SANE_HOST = /^[A-Za-z0-9.\-_~:[\]]{1,255}$/;

/**
 * The absolute URL of another page of the same list: the request's own URL with only `page`
 * (or `cursor`) changed, so every other query parameter is kept as the client sent it.
 */
export function pageUrl(req: Request, param: 'page' | 'cursor', value: string | number, fallbackHost: string): string {
  const host = req.get('host');
  const origin = `${req.protocol}://${host && SANE_HOST.test(host) ? host : fallbackHost}`;
  const q = req.originalUrl.indexOf('?');
  const path = q === -1 ? req.originalUrl : req.originalUrl.slice(0, q);
  const params = new URLSearchParams(q === -1 ? '' : req.originalUrl.slice(q + 1));
  params.set(param, String(value));
  return `${origin}${path}?${params.toString()}`;
}
