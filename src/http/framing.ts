import type { ProblemKind } from '../problems';

/**
 * Fields the service reads as one value. Node keeps the first of two `Host`, `Authorization` or
 * `Content-Type` and joins two `Idempotency-Key` into one; a proxy in front may read another,
 * so that the two decide on different requests.
 */
const SINGLETONS = new Map(['Host', 'Authorization', 'Content-Type', 'Idempotency-Key'].map((name) => [name.toLowerCase(), name]));

/** Why a request that Node parsed is refused before the app sees it, if it is. */
export interface MessageRefusal {
  kind: Extract<ProblemKind, 'bad-framing' | 'duplicate-header' | 'transfer-coding-not-implemented' | 'http-version'>;
  detail: string;
}

/**
 * Refuses what Node's parser lets through but RFC 9112 does not, or what a proxy could read
 * otherwise than the service: another HTTP version than 1.0 and 1.1 (Node takes `HTTP/2.0` and
 * `HTTP/0.9` as 1.1), a transfer coding the service does not implement (Node reads
 * `gzip, chunked` as chunked), Transfer-Encoding in HTTP/1.0 (faulty framing, section 6.1), and a
 * singleton field given twice. `rawHeaders` are Node's: names and values in turn, as sent.
 */
export function messageRefusal(httpVersion: string, rawHeaders: readonly string[]): MessageRefusal | undefined {
  if (httpVersion !== '1.1' && httpVersion !== '1.0') {
    return { kind: 'http-version', detail: `The server speaks HTTP/1.1 and HTTP/1.0, not HTTP/${httpVersion}` };
  }
  const seen = new Set<string>();
  const codings: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    if (name === 'transfer-encoding') codings.push(...rawHeaders[i + 1].split(','));
    if (!SINGLETONS.has(name)) continue;
    if (seen.has(name)) return { kind: 'duplicate-header', detail: `The request carries ${SINGLETONS.get(name)} more than once` };
    seen.add(name);
  }
  if (!codings.length) return undefined;
  if (httpVersion === '1.0') {
    return { kind: 'bad-framing', detail: 'An HTTP/1.0 request cannot carry Transfer-Encoding: its body has no framing to trust' };
  }
  const named = codings.map((c) => c.trim().toLowerCase()).filter(Boolean);
  if (named.some((c) => c !== 'chunked'))
    return { kind: 'transfer-coding-not-implemented', detail: 'The server implements no transfer coding but chunked' };
  if (named.length > 1) return { kind: 'bad-framing', detail: 'The request applies chunked more than once' };
  return undefined;
}
