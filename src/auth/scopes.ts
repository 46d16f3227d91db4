import type { Operation } from 'openapi-backend';

/**
 * A scope is `<collection>:<access>`: a collection's name or `*` for every collection, and
 * `read` or `write` (`*` for both). Read and write are granted apart: a token that may write
 * may not read unless it holds read too (docs/adr/0012-scoped-tokens.md).
 */
export const SCOPE = /^(\*|[a-z][a-z0-9_-]{0,63}):(read|write|\*)$/;

/** The reason `scope` is not one a token can hold, or undefined when it is. */
export function scopeProblem(scope: string, collectionNames: readonly string[]): string | undefined {
  const m = SCOPE.exec(scope);
  if (!m) return `"${scope}" is not a scope such as posts:read, books:write or *:read`;
  if (m[1] !== '*' && !collectionNames.includes(m[1])) return `"${scope}" names no collection (${collectionNames.join(', ')}, or *)`;
  return undefined;
}

/** Whether the scopes held include `needed` (a concrete `collection:access`) directly or by a wildcard. */
export function grants(held: ReadonlySet<string>, needed: string): boolean {
  if (held.has(needed)) return true;
  const [collection, access] = needed.split(':');
  return held.has(`*:${access}`) || held.has(`${collection}:*`) || held.has('*:*');
}

/** The extension on each operation that names the scopes it needs, all of them. */
export const REQUIRED_SCOPES = 'x-required-scopes';

/**
 * The scopes each operation needs, read once from the spec's `x-required-scopes`, so that the
 * contract and the check cannot disagree. An operation that requires a token (its security names
 * a scheme) must list its scopes: one that does not stops the service at start rather than
 * letting every token through.
 */
export function requiredScopes(operations: readonly Operation[]): Map<string, readonly string[]> {
  const out = new Map<string, readonly string[]>();
  for (const op of operations) {
    const listed = (op as unknown as Record<string, unknown>)[REQUIRED_SCOPES];
    const secured = (op.security ?? []).some((r) => Object.keys(r).length > 0);
    if (listed === undefined) {
      if (secured) throw new Error(`operation ${op.operationId} has a security requirement but no ${REQUIRED_SCOPES}`);
      continue;
    }
    if (!Array.isArray(listed) || !listed.every((s) => typeof s === 'string' && SCOPE.test(s) && !s.includes('*'))) {
      throw new Error(`operation ${op.operationId}: ${REQUIRED_SCOPES} must list scopes such as posts:read`);
    }
    out.set(op.operationId ?? '', listed as string[]);
  }
  return out;
}
