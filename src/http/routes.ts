import type { Operation } from 'openapi-backend';

/** What a request path and method find in the spec. */
export type RouteMatch =
  { kind: 'operation'; operation: Operation; params: Record<string, string> } | { kind: 'method'; allowed: string[] } | { kind: 'none' };

export interface RouteTable {
  match(method: string, path: string): RouteMatch;
  /** Methods the spec gives the path (HEAD with GET), or undefined if no spec path matches. */
  allowed(path: string): string[] | undefined;
}

interface Route {
  path: string;
  regex: RegExp;
  names: string[];
  byMethod: Map<string, Operation>;
  allowed: string[];
}

/**
 * The spec's paths compiled once. openapi-backend's own matcher rebuilds its operation list and
 * a regular expression per path on every request, which profiling showed to be the largest
 * cost of a simple GET; app.ts routes with this table instead.
 */
export function routeTable(operations: Operation[]): RouteTable {
  const routes = new Map<string, Route>();
  for (const op of operations) {
    let route = routes.get(op.path);
    if (!route) {
      const names: string[] = [];
      const pattern = op.path
        .split(/\{([^}]+)\}/)
        .map((part, i) => (i % 2 ? (names.push(part), '([^/]+)') : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('');
      route = { path: op.path, regex: new RegExp(`^${pattern}$`), names, byMethod: new Map(), allowed: [] };
      routes.set(op.path, route);
    }
    route.byMethod.set(op.method.toUpperCase(), op);
  }
  // Literal paths before templates, as openapi-backend orders them; HEAD is served with GET
  // even where the spec does not declare it (it declares it beside every GET).
  const ordered = [...routes.values()].sort((a, b) => a.names.length - b.names.length);
  for (const r of ordered) {
    r.allowed = [...r.byMethod.keys()].filter((m) => m !== 'HEAD');
    if (r.byMethod.has('GET')) r.allowed.splice(r.allowed.indexOf('GET') + 1, 0, 'HEAD');
  }

  // A path without parameters is found by name; only the others are tried one pattern at a time.
  const literal = new Map(ordered.filter((r) => !r.names.length).map((r) => [r.path, r]));
  const templates = ordered.filter((r) => r.names.length);

  function find(path: string): { route: Route; values: string[] } | undefined {
    const exact = literal.get(path);
    if (exact) return { route: exact, values: [] };
    for (const route of templates) {
      const m = route.regex.exec(path);
      if (m) return { route, values: m.slice(1) };
    }
    return undefined;
  }

  return {
    match(method, path) {
      const found = find(path);
      if (!found) return { kind: 'none' };
      const operation = found.route.byMethod.get(method) ?? (method === 'HEAD' ? found.route.byMethod.get('GET') : undefined);
      if (!operation) return { kind: 'method', allowed: found.route.allowed };
      // As written, not decoded: every path parameter is an id, and `%32` is not how the service
      // writes 2 (one record, one URL); validation answers it 404 like `02`.
      const params: Record<string, string> = {};
      found.route.names.forEach((name, i) => {
        params[name] = found.values[i];
      });
      return { kind: 'operation', operation, params };
    },
    allowed(path) {
      return find(path)?.route.allowed;
    },
  };
}
