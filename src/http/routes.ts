import type { OpenAPIV3 } from 'openapi-types';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface SpecRoutes {
  /** Methods the spec gives the path (upper case, HEAD with GET), or undefined if no spec path matches. */
  allowed(path: string): string[] | undefined;
}

/** Matches request paths against the spec's path templates, for 308 and 405 answers. */
export function specRoutes(spec: OpenAPIV3.Document): SpecRoutes {
  const routes = Object.entries(spec.paths).map(([template, item]) => {
    const pattern = template
      .split(/\{[^}]+\}/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]+');
    const methods = METHODS.filter((m) => item?.[m]).map((m) => m.toUpperCase());
    if (methods.includes('GET')) methods.splice(methods.indexOf('GET') + 1, 0, 'HEAD');
    return { regex: new RegExp(`^${pattern}$`), methods };
  });
  return {
    allowed(path) {
      return routes.find((r) => r.regex.test(path))?.methods;
    },
  };
}
