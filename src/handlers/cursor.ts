import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { OrderKey } from '../db/order';
import type { Row } from '../db/records';

/**
 * Opaque cursors: the boundary row's sort-key values, the direction, and a fingerprint of the
 * query they belong to, signed with the database's cursor secret so that an altered cursor, or
 * one from another ordering, filter or search, is refused rather than silently misread.
 */
interface Payload {
  /** 'n': the page after the boundary; 'p': the page before it. */
  d: 'n' | 'p';
  /** The boundary row's values of the order's keys. */
  k: unknown[];
  /** Fingerprint of the collection, ordering, filters and search. */
  f: string;
}

export type Decoded = { ok: true; backward: boolean; after: unknown[] } | { ok: false; message: string };

export function fingerprint(collection: string, query: Record<string, unknown>, params: readonly string[]): string {
  const bound = [collection, ...params.filter((p) => query[p] !== undefined).map((p) => [p, query[p]])];
  return createHash('sha256').update(JSON.stringify(bound)).digest('base64url').slice(0, 16);
}

function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('base64url').slice(0, 22);
}

/** The values of the order's keys in a row: what a cursor stores of its boundary. */
export function boundary(row: Row, order: readonly OrderKey[]): unknown[] {
  return order.map((key) => row[key.column] ?? null);
}

export function encodeCursor(secret: string, direction: 'n' | 'p', values: unknown[], print: string): string {
  const payload: Payload = { d: direction, k: values, f: print };
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${sign(secret, body)}`;
}

export function decodeCursor(secret: string, token: string, order: readonly OrderKey[], print: string): Decoded {
  const [body, signature, extra] = token.split('.');
  // Bytes, not characters: a signature of the right length holding a character over one byte
  // would make timingSafeEqual throw.
  const given = Buffer.from(signature ?? '');
  const expected = Buffer.from(sign(secret, body ?? ''));
  if (extra !== undefined || !signature || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, message: 'is not a cursor this service issued (altered or truncated)' };
  }
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString()) as Payload;
  if (payload.f !== print || payload.k.length !== order.length) {
    return { ok: false, message: 'belongs to another ordering, filter or search; start again with cursor=' };
  }
  return { ok: true, backward: payload.d === 'p', after: payload.k };
}
