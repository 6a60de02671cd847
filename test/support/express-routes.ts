import type { Express } from 'express';

/** One route an express app serves: its method (lower case) and its path as OpenAPI writes it (`/v1/turns/{id}`). */
export interface ServedRoute {
  method: string;
  path: string;
}

interface Layer {
  rawPath?: string | string[];
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/**
 * Every route of the app, found by walking its router and the routers mounted on it (what
 * `app.get` and `Router().post` made), so that a route added without a document shows here.
 */
export function servedRoutes(app: Express): ServedRoute[] {
  const router = (app as unknown as { router: { stack: Layer[] } }).router;
  return walk(router.stack, '');
}

function walk(stack: Layer[], prefix: string): ServedRoute[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      const path = openApiPath(`${prefix}${layer.route.path}`);
      return Object.keys(layer.route.methods)
        .filter((method) => method !== '_all')
        .map((method) => ({ method, path }));
    }
    if (!layer.handle.stack) return [];
    const mounts = Array.isArray(layer.rawPath) ? layer.rawPath : [layer.rawPath ?? '/'];
    return mounts.flatMap((mount) => walk(layer.handle.stack!, `${prefix}${mount === '/' ? '' : mount}`));
  });
}

/** `/v1/turns/:id/` → `/v1/turns/{id}` */
function openApiPath(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, '') : path;
  return trimmed.replace(/:(\w+)/g, '{$1}');
}
