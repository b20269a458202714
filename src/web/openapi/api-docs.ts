// The OpenAPI document of the route schemas at /docs/json (and /docs/yaml), and Swagger UI at /docs, served from node_modules.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RQ_VERSION } from '../../version.js';
import type { WebContext } from '../web-context.js';
import { documentationOnlySchemas } from './documentation-only.js';
import { TAG_DESCRIPTIONS } from './shapes.js';

/** Under relative_root, like every route. */
export const DOCS_PATH = '/docs';

const DESCRIPTION =
  'The classic RQ HTTP API and its extensions, generated from the route table (`src/web/routes.ts`). Texts, status codes and ' +
  'redirects are those of `docs/http-api.md`, which has the examples. JSON routes answer `["fail","<text>"]` with the status of ' +
  'the error catalogue; form posts answer 303 with a flash unless they are given `x_format=json`. The schemas document; they do ' +
  'not validate: every parameter is checked by its handler, in the catalogue\'s words. (R): requests for any queue but relay ' +
  'and cleaner go to rq_router while `config/rq_router_rules.rb` exists.';

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
    theme: { title: 'rq HTTP API' },
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
