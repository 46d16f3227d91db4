import type { Request, Response } from 'express';
import { principalOf } from '../auth/middleware';
import { grants } from '../auth/scopes';

/** Whether the request's `Prefer` header (RFC 7240, any number of fields) holds `return=minimal`. */
export function prefersMinimal(req: Request): boolean {
  const header = req.get('prefer');
  if (!header) return false;
  return header.split(',').some((preference) => {
    const [token] = preference.split(';');
    const [name, value = ''] = token.split('=').map((part) => part.trim().toLowerCase());
    return name === 'return' && value.replace(/^"(.*)"$/, '$1') === 'minimal';
  });
}

/** Whether the caller may read `collection`: an open API, or a token holding `<collection>:read`. */
export function mayRead(res: Response, collection: string): boolean {
  const principal = principalOf(res);
  return !principal || grants(principal.scopes, `${collection}:read`);
}

/**
 * Whether a write answers without a body (204): the caller asked for it, or may not read the
 * collection, so that a token that only writes never receives a record (docs/security.md).
 * Sets `Preference-Applied` when the caller asked.
 */
export function answerMinimal(req: Request, res: Response, collection: string): boolean {
  const asked = prefersMinimal(req);
  if (asked) res.setHeader('Preference-Applied', 'return=minimal');
  return asked || !mayRead(res, collection);
}
