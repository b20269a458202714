// Every method × path the web app registers, read from buildApp itself, so sweeps cover routes added later.
import diagnostics from 'node:diagnostics_channel';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { loadGlobalConfig } from '../../src/config/global-config.js';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { buildApp } from '../../src/web/app.js';
import { MgrClient } from '../../src/ipc/mgr-client.js';
import { TimersClient } from '../../src/ipc/timers-client.js';
import { QueueClients } from '../../src/web/queue-clients.js';
import { inProcessDeps } from './in-process-app.js';

export interface Route {
  method: string;
  /** The pattern as registered, relative_root prefix included, e.g. `/q/:q/:id/attach/:name`. */
  pattern: string;
}

/**
 * Builds the app for `root`'s config.json (nothing is started or asked) and returns its routes,
 * HEAD twins of GET routes and one route per static file included.
 */
export async function routeTable(root: string): Promise<Route[]> {
  const routes: Route[] = [];
  const built = await appFor(root, (r) => {
    for (const method of [r.method].flat()) routes.push({ method, pattern: r.url });
  });
  await built.close();
  const seen = new Set<string>();
  return routes.filter((r) => !seen.has(`${r.method} ${r.pattern}`) && seen.add(`${r.method} ${r.pattern}`));
}

export interface BuiltApp {
  app: FastifyInstance;
  close(): Promise<void>;
}

/**
 * buildApp for `root` (its config.json, sockets and public files), ready, not listening: requests
 * go in with `app.inject`. `onRoute` sees every route before fastify compiles it, and may change it.
 * fastify announces each new instance on a diagnostics channel before anything is registered on
 * it: that is where the onRoute hook goes, without buildApp having to expose anything for tests.
 */
export async function appFor(root: string, onRoute: (r: RouteOptions) => void): Promise<BuiltApp> {
  const onInit = (msg: unknown) => {
    const app = (msg as { fastify: FastifyInstance }).fastify;
    app.addHook('onRoute', onRoute);
  };
  diagnostics.subscribe('fastify.initialization', onInit);
  const paths = rootPaths(root);
  const queues = new QueueClients({ sockPath: (q) => queuePaths(root, q).sock });
  let app: FastifyInstance;
  try {
    app = await buildApp(
      inProcessDeps(root, {
        config: await loadGlobalConfig(paths.configFile),
        queues,
        mgr: new MgrClient(paths.mgrSock),
        timers: new TimersClient(paths.timersSock),
        cookieSecret: 'route-table-route-table-route-table',
      }),
    );
  } finally {
    diagnostics.unsubscribe('fastify.initialization', onInit);
  }
  await app.ready();
  return {
    app,
    async close() {
      await app.close();
      queues.close();
    },
  };
}

/**
 * What a wildcard route is filled with: a real file behind it. Keyed by the pattern's end, so
 * relative_root does not matter.
 */
const WILDCARD_FILLS: Record<string, string> = {
  // @fastify/swagger-ui's assets (openapi/api-docs.ts).
  '/docs/static/*': 'swagger-ui.css',
};

/** Routes that answer only with a query (brightroll's /search needs the queue's name): what the sweep adds. */
const QUERY_FILLS: Record<string, (values: Record<string, string>) => string> = {
  '/search': (values) => `?name=${encodeURIComponent(values.q)}`,
};

/**
 * The route's path with every `:param` replaced by a real value. A parameter without a value is
 * an error rather than a skipped route: a new kind of route must be given something real to hit.
 */
export function fillRoute(pattern: string, values: Record<string, string>): string {
  if (pattern.includes('*')) {
    const fill = Object.entries(WILDCARD_FILLS).find(([end]) => pattern.endsWith(end));
    if (!fill) throw new Error(`route ${pattern}: wildcard routes need a fill rule in test/web/route-table.ts`);
    pattern = pattern.slice(0, -1) + fill[1];
  }
  const query = Object.entries(QUERY_FILLS).find(([end]) => pattern.endsWith(end))?.[1](values) ?? '';
  return (
    pattern.replace(/:(\w+)/g, (_m, name: string) => {
      if (!Object.hasOwn(values, name)) throw new Error(`route ${pattern}: no value for :${name}; give the sweep a real one`);
      return encodeURIComponent(values[name]);
    }) + query
  );
}
