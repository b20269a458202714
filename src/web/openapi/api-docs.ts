// The OpenAPI document of the route schemas at /docs/json (and /docs/yaml), and Swagger UI at /docs, served from node_modules.
import fs from 'node:fs';
import path from 'node:path';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RQ_VERSION } from '../../version.js';
import type { WebContext } from '../web-context.js';
import { documentationOnlySchemas } from './documentation-only.js';
import { TAG_DESCRIPTIONS } from './shapes.js';

/** Under relative_root, like every route. */
export const DOCS_PATH = '/docs';

/** What a user of the API reads first, at the top of /docs and in /docs/json. */
const DESCRIPTION = [
  "rq's HTTP API: send messages to queues, follow them to their end, read their output and attachments, act on them " +
    '(cancel, requeue, retry, delete, in bulk too) and watch the queues, their statistics and their health. It is the API ' +
    "of the classic RQ daemon, every route, text and status as it was, with rq's extensions beside it; the dashboard at `/` " +
    'is built on it.',
  "**Authentication**: none unless the server's `config/config.json` sets `basic_auth` (then HTTP Basic on every request, " +
    'perhaps without `/metrics` and `/healthz`); the server answers only requests naming it in `Host`, and `allowed_ips` may ' +
    'limit who connects.',
  '**Formats**: routes ending in `.json` answer JSON; a JSON refusal is `["fail","<text>"]` with the status of its error. ' +
    'Form posts (the classic formats, what the pages send) answer a 303 to a page with a notice; give them `x_format=json` for ' +
    'a JSON answer instead. Routes marked (R) go to the rq_router queue while routing rules are installed.',
  'The schemas here describe and do not validate: each parameter is checked by its handler, whose refusal names it. ' +
    "`docs/http-api.md` in rq's source (and beside this server's installation) has every route with examples and the exact " +
    'texts.',
].join('\n\n');

/** rq's own mark, the pages' favicon: Swagger UI's logo and favicon instead of the plugin's. */
function rqMark(publicDir: string): Buffer | null {
  try {
    return fs.readFileSync(path.join(publicDir, 'favicon.svg'));
  } catch {
    return null;
  }
}

function openapiObject(ctx: WebContext): Record<string, unknown> {
  const auth = Boolean(ctx.deps.config.basic_auth);
  return {
    openapi: '3.0.3',
    info: { title: 'rq', version: RQ_VERSION, description: DESCRIPTION },
    // Relative, so "Try it out" stays on whatever host and port the page was loaded from.
    servers: [{ url: ctx.urls.prefix || '/', description: 'This server' }],
    tags: Object.entries(TAG_DESCRIPTIONS).map(([name, description]) => ({ name, description })),
    ...(auth ? { components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } }, security: [{ basic: [] }] } : {}),
  };
}

/**
 * Registers the document and the UI on `scope` (the relative_root scope of app.ts), before any
 * route: @fastify/swagger collects routes from an onRoute hook, and the documentation-only
 * compilers must be in place before the first schema is compiled.
 */
export async function registerApiDocs(scope: FastifyInstance, ctx: WebContext): Promise<void> {
  documentationOnlySchemas(scope);
  const prefix = ctx.urls.prefix;
  const mark = rqMark(ctx.deps.publicDir);
  await scope.register(swagger, {
    openapi: openapiObject(ctx),
    // Paths relative to `servers` (relative_root): '/rq' itself, the dashboard, becomes '/'.
    stripBasePath: false,
    transform: ({ schema, url }) => ({ schema, url: url.slice(prefix.length) || '/' }),
    transformObject: (doc) => optionalBodies('openapiObject' in doc ? doc.openapiObject : doc.swaggerObject),
  });
  await scope.register(swaggerUi, {
    routePrefix: DOCS_PATH,
    // Asset links of `/docs` (no trailing slash) are absolute: they must carry relative_root.
    indexPrefix: prefix,
    theme: {
      title: 'rq HTTP API',
      ...(mark ? { favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: mark }] } : {}),
    },
    // The logo leads back to the dashboard.
    ...(mark ? { logo: { type: 'image/svg+xml', content: mark, href: ctx.urls.link(''), target: '_self' as const } } : {}),
    uiConfig: { deepLinking: true, docExpansion: 'list', tryItOutEnabled: false },
    uiHooks: { onRequest: async (req, reply) => (isIndexHtml(req) ? ctx.redirectTo(req, reply, ctx.urls.link(`${DOCS_PATH.slice(1)}/`)) : undefined) },
  });
}

/** The plugin marks every body required; an action's fields may all come in the query string instead. */
function optionalBodies<T>(doc: T): T {
  for (const ops of Object.values((doc as { paths?: Record<string, Record<string, { requestBody?: { required?: boolean } }>> }).paths ?? {})) {
    for (const op of Object.values(ops)) if (op.requestBody) op.requestBody.required = false;
  }
  return doc;
}

/**
 * The plugin answers `/docs/static/index.html` with a redirect to its own URL minus that suffix:
 * with a query string the suffix is not last, so it redirected to itself forever (and echoed the
 * query into Location). It goes to the UI's page instead, a 303 like every other redirect of rq.
 */
function isIndexHtml(req: FastifyRequest): boolean {
  return req.routeOptions.url?.endsWith(`${DOCS_PATH}/static/index.html`) === true;
}
