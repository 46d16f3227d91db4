import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';

// The API answers JSON and loads nothing: its pages may do nothing at all.
const API_POLICY = {
  defaultSrc: ["'none'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
};

// Redoc's page is one file of inline script and styles that it adds at run time, a web worker
// from a blob, and data: images and fonts; it loads nothing from elsewhere.
const DOCS_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'", "'unsafe-inline'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'", 'data:'],
  workerSrc: ["'self'", 'blob:'],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  frameAncestors: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'none'"],
};

/** Helmet's security headers on every response, with a CSP that lets only /docs run a page. */
export function securityHeaders(docsPath: string) {
  const api = helmet({ contentSecurityPolicy: { useDefaults: false, directives: API_POLICY } });
  const docs = helmet({ contentSecurityPolicy: { useDefaults: false, directives: DOCS_POLICY } });
  return (req: Request, res: Response, next: NextFunction) => (req.path === docsPath ? docs : api)(req, res, next);
}
