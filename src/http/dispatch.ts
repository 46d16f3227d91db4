import type { NextFunction, Request, Response } from 'express';
import type { Context, OpenAPIBackend, ParsedRequest } from 'openapi-backend';
import { toNfc } from '../lib/text';
import { type FieldError, HttpProblem, invalid } from '../problems';
import type { RequestLocals } from './requestContext';
import { fieldErrors, onlyPathErrors, operationParams } from './validation';
import { sentTarget } from '../lib/requestTarget';
import { withoutServiceSetFields } from './serviceSet';

/** Errors a request can have beyond the spec's (a list's own rules), so that one 400 names all. */
export type ExtraErrors = (operationId: string, query: Record<string, string | string[]>) => FieldError[];

/**
 * Routes with the app's route table (compiled once from the spec's operations), validates with
 * openapi-backend's public validateRequest against that operation, and calls the handler
 * registered for its operationId. Every failure is thrown to the error handler.
 */
export function dispatch(api: OpenAPIBackend, extraErrors: ExtraErrors) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const { route } = res.locals as RequestLocals;
      if (route.kind === 'none') throw new HttpProblem('route-not-found', `Nothing at ${req.path}`);
      if (route.kind === 'method') {
        throw new HttpProblem('method-not-allowed', `${req.method} is not allowed on this path`, undefined, {
          Allow: route.allowed.join(', '),
        });
      }
      const { operation } = route;
      // A path parameter that names nothing: a record's id, or a problem type's kind.
      const missing = () => new HttpProblem('not-found', 'id' in route.params ? 'No record with this id' : `Nothing at ${req.path}`);
      const params = operationParams(operation, route.params, req.query, sentTarget(req).query ?? '');
      if (params.loose === 'path') throw missing();
      if (params.loose.length) throw invalid(params.loose);

      const request = {
        method: req.method === 'HEAD' ? 'GET' : req.method,
        path: req.path,
        // In the form text is stored in (NFC), so that a search or filter finds it however typed.
        query: toNfc(params.query),
        // A body that is a JSON string goes as its JSON text: openapi-backend parses a string body
        // again, so `"{\"title\": ...}"` would be validated as an object and reach us as a string.
        body: typeof req.body === 'string' ? JSON.stringify(req.body) : (req.body as unknown),
        headers: req.headers as Record<string, string>,
      };
      const validation = api.validateRequest(request, operation);
      const errors = validation.errors ?? [];
      if (errors.length) {
        if (onlyPathErrors(errors)) throw missing();
        const named = fieldErrors(errors);
        const more = extraErrors(
          operation.operationId ?? '',
          api.router.parseRequest(request, operation).query as Record<string, string | string[]>,
        );
        throw invalid([...named, ...more.filter((m) => !named.some((n) => n.field === m.field))]);
      }
      // The request as validated and coerced, not parsed a second time: validateRequest has
      // already parsed it (path parameters, the query with its arrays split) and ajv has coerced
      // the parameters' types in place.
      const coerced = validation.coerced as typeof request & { params?: Record<string, unknown> };
      const parsed: ParsedRequest = {
        method: request.method,
        path: request.path,
        params: coerced.params ?? route.params,
        query: coerced.query,
        headers: request.headers,
        cookies: {},
        // Validated with them (typed as in a record), then dropped: their values are ignored.
        requestBody: withoutServiceSetFields(operation, request.body),
      };
      const context = { api, operation, validation, request: parsed } as Context;
      const handler = api.handlers[operation.operationId ?? ''];
      if (!handler) throw new Error(`no handler for operation ${operation.operationId}`);
      await handler(context, req, res);
    } catch (err) {
      next(err);
    }
  };
}
