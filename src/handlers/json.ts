import type { Response } from 'express';
import fastJson from 'fast-json-stringify';
import type { Operation } from 'openapi-backend';
import type { OpenAPIV3 } from 'openapi-types';

export type Stringify = (body: unknown) => string;

const compiled = new WeakMap<Operation, Map<number, Stringify>>();

/**
 * The serializer for an operation's JSON answer with this status, compiled once with
 * fast-json-stringify from the response schema of the (dereferenced) operation the request was
 * routed to: the contract stays the one source, and the text is the same as JSON.stringify's
 * (tests/unit/handlers/json.test.ts). A status the spec gives no JSON object schema for uses JSON.stringify.
 */
export function stringifier(operation: Operation, status: number): Stringify {
  let byStatus = compiled.get(operation);
  if (!byStatus) compiled.set(operation, (byStatus = new Map<number, Stringify>()));
  let stringify = byStatus.get(status);
  if (!stringify) byStatus.set(status, (stringify = compile(responseSchema(operation, status))));
  return stringify;
}

/** Compiles every operation's JSON answers up front, so that no request pays for it. */
export function compileResponses(operations: readonly Operation[]): void {
  for (const operation of operations) {
    for (const status of Object.keys(operation.responses ?? {})) if (/^2[0-9]{2}$/.test(status)) stringifier(operation, Number(status));
  }
}

export function responseSchema(operation: Operation, status: number): OpenAPIV3.SchemaObject | undefined {
  const response = operation.responses?.[String(status)] as OpenAPIV3.ResponseObject | undefined;
  return response?.content?.['application/json']?.schema as OpenAPIV3.SchemaObject | undefined;
}

function compile(schema: OpenAPIV3.SchemaObject | undefined): Stringify {
  // Only objects the spec describes field by field; anything looser is left to JSON.stringify.
  if (!schema || !(schema.type === 'object' || schema.allOf)) return JSON.stringify;
  return fastJson(schema as Parameters<typeof fastJson>[0]);
}

/**
 * Writes a JSON answer as express's res.json would (same status, Content-Type and
 * Content-Length; no body on HEAD, which node leaves out), without its per-call lookups of app
 * settings, ETag and freshness checks: the app turns ETags off and sets record tags itself.
 */
export function sendJson(res: Response, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
