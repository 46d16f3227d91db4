import type { NextFunction, Request, Response } from 'express';
import { HttpProblem } from '../problems';

/**
 * An HTTP/1.1 request must name its Host (RFC 9112, section 3.2): a 400 problem, as every other
 * error, where Node's own check (off: server.ts) wrote a bare 400. HTTP/1.0 may leave it out;
 * links then use the fallback host.
 */
export function hostRequired() {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (req.httpVersion === '1.1' && req.headers.host === undefined)
      return next(new HttpProblem('host-required', 'An HTTP/1.1 request must carry a Host header'));
    next();
  };
}
