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

type HeaderStep = [name: string, value: string | undefined];

/**
 * What helmet does to a response with these options, recorded once: every header it sets (or
 * removes) is fixed by the options, none by the request. Replaying the list spares each response
 * helmet's chain of thirteen middleware calls.
 */
function recorded(options: Parameters<typeof helmet>[0]): HeaderStep[] {
  const steps: HeaderStep[] = [];
  const res = {
    setHeader: (name: string, value: unknown) => void steps.push([name, String(value)]),
    removeHeader: (name: string) => void steps.push([name, undefined]),
  };
  let done = false;
  helmet(options)({} as Request, res as unknown as Response, (err?: unknown) => {
    done = !err;
  });
  // A helmet whose headers depended on the request, or came later, could not be recorded.
  if (!done) throw new Error('helmet did not set its headers at once');
  return steps;
}

/** The API's security headers, as helmet sets them: also for answers written outside express. */
export const API_SECURITY_HEADERS: readonly HeaderStep[] = recorded({
  contentSecurityPolicy: { useDefaults: false, directives: API_POLICY },
});

/** Helmet's security headers on every response, with a CSP that lets only /docs run a page. */
export function securityHeaders(docsPath: string) {
  const api = API_SECURITY_HEADERS;
  const docs = recorded({ contentSecurityPolicy: { useDefaults: false, directives: DOCS_POLICY } });
  return (req: Request, res: Response, next: NextFunction) => {
    for (const [name, value] of req.path === docsPath ? docs : api) {
      if (value === undefined) res.removeHeader(name);
      else res.setHeader(name, value);
    }
    next();
  };
}
