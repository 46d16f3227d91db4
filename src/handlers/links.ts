import { parse } from 'node:querystring';
import type { Request } from 'express';
import { sentTarget } from '../lib/requestTarget';

const SANE_HOST = /^[A-Za-z0-9.\-_~:[\]]{1,255}$/;

/** Where absolute links point: the configured public URL, else a trusted Host, else the fallback. */
export interface LinkOrigin {
  /** PUBLIC_URL's origin (`https://api.example.com`): every link starts with it. */
  publicUrl?: string;
  /** ALLOWED_HOSTS: Host values (`name` or `name:port`) that links may repeat; loopback names always may. */
  allowedHosts: readonly string[];
  /** Host for links when the request's is missing or not allowed. */
  fallbackHost: string;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A Host a link may repeat: a loopback name (it can point a client only at its own machine) or one allowed. */
function hostAllowed(host: string, allowed: readonly string[]): boolean {
  const name = host.replace(/:\d+$/, '');
  return LOOPBACK.has(name) || allowed.includes(host) || allowed.includes(name);
}

function originOf(req: Request, links: LinkOrigin): string {
  if (links.publicUrl) return links.publicUrl;
  const host = req.get('host')?.toLowerCase();
  // Any other Host would put a name the client chose into links that a cache may serve to others.
  return `${req.protocol}://${host && SANE_HOST.test(host) && hostAllowed(host, links.allowedHosts) ? host : links.fallbackHost}`;
}

/**
 * The absolute URL of another page of the same list: the request's own URL with only `page`
 * (or `cursor`) changed, so every other query parameter is kept as the client sent it.
 */
export function pageUrl(req: Request, param: 'page' | 'cursor', value: string | number, links: LinkOrigin): string {
  const origin = originOf(req, links);
  const { path, query } = sentTarget(req);
  // Parts are copied as sent (re-encoding changed `x=%FF`), and the value stays where the
  // parameter was: Express reads only the first 1,000 parts, so a moved `page` would go unread.
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
