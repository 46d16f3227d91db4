import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { toNfc } from '../lib/text';
import { duplicateKey } from './jsonKeys';
import { HttpProblem, invalid } from '../problems';
import type { RouteTable } from './routes';
import { malformedStrings } from './validation';

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

/** Requests whose client waits for 100 Continue before it sends the body, which Node left to us. */
const continueHeld = new WeakSet<IncomingMessage>();

/** listen() takes `Expect: 100-continue` from Node (server.ts): jsonBody sends the 100. */
export function holdContinue(req: IncomingMessage): void {
  continueHeld.add(req);
}

/** Each request's body as read, for the checks after the parse (duplicateKey). */
const bodies = new WeakMap<IncomingMessage, Buffer>();

/**
 * Only an operation that takes a body reads one, and only as UTF-8 JSON: anything else is a 415
 * before any byte is parsed. Parse failures (bad JSON, too large, cut short) reach the error
 * handler as body-parser's typed errors; strings JSON admits but the contract refuses are a 400.
 */
export function jsonBody(routes: RouteTable, limit: number) {
  const json = express.json({
    limit,
    type: () => true,
    strict: false,
    // An empty body is no JSON document; body-parser would read it as {}, and a PATCH would pass.
    verify: (req, _res, buf) => {
      if (buf.length === 0) throw Object.assign(new Error('empty body'), { type: 'entity.parse.failed' });
      // body-parser would decode a byte that is not UTF-8 as U+FFFD and store that (a 201).
      if (!isUtf8(buf))
        throw new HttpProblem('malformed-body', 'The request body is not valid UTF-8', [{ field: 'body', message: 'must be UTF-8' }]);
      bodies.set(req, buf);
    },
  });
  return (req: Request, res: Response, next: NextFunction) => {
    if (!WITH_BODY.has(req.method) || !routes.allowed(req.path)?.includes(req.method)) return next();
    const [type, ...params] = String(req.headers['content-type'] ?? '')
      .toLowerCase()
      .split(';')
      .map((p) => p.trim());
    if (type !== 'application/json') {
      return next(new HttpProblem('unsupported-media-type', `The request body must be application/json, not ${type || 'absent'}`));
    }
    // JSON is UTF-8 (RFC 8259); body-parser would also decode UTF-16, which the contract refuses.
    const charset = params
      .find((p) => p.startsWith('charset='))
      ?.slice('charset='.length)
      .replace(/"/g, '');
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      return next(new HttpProblem('unsupported-media-type', `The request body must be UTF-8 application/json, not charset ${charset}`));
    }
    // body-parser knows the alias `utf8` by no name (it takes charsets spelled `utf-*` only) and
    // would refuse the body with a 415: it is handed the charset's own name.
    if (charset === 'utf8') req.headers['content-type'] = 'application/json; charset=utf-8';
    // A client waiting for 100 Continue has sent none of its body: a declared length over the
    // limit is refused then, and the connection closes. One already sending is read to the end
    // by body-parser before its 413: closing under it would cut the answer off (EPIPE). (A
    // compressed body's length says nothing of its inflated size: the parser checks that.)
    const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (continueHeld.has(req) && encoding === 'identity' && Number(req.headers['content-length']) > limit) {
      res.setHeader('Connection', 'close');
      return next(Object.assign(new Error('declared length over the limit'), { type: 'entity.too.large' }));
    }
    // Every check before the body has passed: the client may send it now.
    if (continueHeld.delete(req)) res.writeContinue();
    json(req, res, (err?: unknown) => {
      if (err) return next(err);
      const buf = bodies.get(req);
      const twice = buf && duplicateKey(buf);
      if (twice) {
        return next(
          new HttpProblem('malformed-body', `The request body has the key "${twice}" more than once`, [
            { field: twice, message: 'must appear once' },
          ]),
        );
      }
      const bad = malformedStrings(req.body);
      if (bad.length) return next(invalid(bad));
      // Checked and stored in one Unicode form: limits count the characters that are stored.
      req.body = toNfc(req.body as unknown);
      next();
    });
  };
}
