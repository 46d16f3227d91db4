import type { NextFunction, Request, Response } from 'express';
import type { RouteTable } from './routes';
import { sentTarget } from '../lib/requestTarget';

/**
 * Paths end with a slash; the same path without it is redirected (308 keeps method and body),
 * with its query. Only where the slashed path exists: anything else is the 404 it would be anyway.
 */
export function slashRedirect(routes: RouteTable) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.path.endsWith('/') || !routes.allowed(`${req.path}/`)) return next();
    const { query } = sentTarget(req);
    res.redirect(308, `${req.path}/${query === undefined ? '' : `?${query}`}`);
  };
}
