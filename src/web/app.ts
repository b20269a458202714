// buildApp: the fastify instance of the web process (HTTP API + HTML UI + live tail), from explicit deps.
import path from 'node:path';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import fastifyStatic from '@fastify/static';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { RqError, shown } from '../errors.js';
import { allowedHostNames } from '../config/exposure.js';
import { admissionProblem, originProblem } from './access-control.js';
import { fleetPeer } from './fleet-peer.js';
import { headerRefusal, installBasicAuth } from './basic-auth.js';
import { installFormRefusals } from './form-refusal.js';
import { installJsonErrors } from './json-errors.js';
import { installJsonBody } from './json-body.js';
import { serveChartLib } from './chart-lib.js';
import { parseFormBody, parseQuery, requireShallow, requireCleanQuery } from './params.js';
import { registerApiDocs } from './openapi/api-docs.js';
import { registerRoutes } from './routes.js';
import { WebContext } from './web-context.js';
import { limitConnections } from './connection-limits.js';
import { installBoundedDrain } from './bounded-drain.js';
import { installGracefulClose } from './web-shutdown.js';
import { DEFAULT_MAX_UPLOAD_BYTES, type WebDeps } from './web-deps.js';
import { installJsonLines } from './api/batch-api.js';
import { routerRefusals } from './router-refusals.js';
import { clientRefusal } from './client-refusal.js';

/** Form posts and JSON bodies (max_body_bytes); files go through multipart, which streams and has its own limit. */
const FORM_BODY_LIMIT = 16 * 1024 * 1024;

/** One text field of a multipart form (max_field_bytes): a message field holds at most 1 MiB of text. */
const FIELD_LIMIT = 2 * 1024 * 1024;

declare module 'fastify' {
  interface FastifyInstance {
    /** max_field_bytes, for the multipart reader (multipart-reader.ts) to apply and name in a refusal. */
    rqFieldLimit: number;
    /** max_upload_bytes: the most a file part holds where a route drains its files unread. */
    rqUploadLimit: number;
  }
}

interface Limits {
  body: number;
  field: number;
  upload: number;
}

/** Whole-request receive limit: large uploads over slow links need time, but not forever. */
const REQUEST_TIMEOUT_MS = 30 * 60 * 1000;
const CONNECTIONS_CHECK_MS = 1000;
/** A path part (a queue name, a message id, an attachment name) longer than this is refused by the router itself (router-refusals.ts). */
const MAX_PARAM_LENGTH = 1000;

/**
 * Refusals of a request not let in: nothing of its body is read to choose their format. Most come
 * in onRequest, before a multipart body is even known as one; a 403 to the fleet's peer user (its
 * multipart call to the message route, fleet-peer.ts requireCommit) comes after, with the body unread.
 */
const AT_THE_DOOR = new Set([401, 403, 413, 421, 429]);

function statusOf(err: FastifyError | RqError | Error): number {
  if (err instanceof RqError) return err.code === 'RQ_ERR_NO_REPLY' ? 503 : err.status;
  const e = err as FastifyError;
  if (e.code === 'FST_REQ_FILE_TOO_LARGE' || e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return 413;
  return typeof e.statusCode === 'number' && e.statusCode >= 400 ? e.statusCode : 500;
}

function messageOf(err: FastifyError | RqError | Error, status: number, ctx: WebContext, limits: Limits): string {
  const e = err as FastifyError;
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return `413 - Request body too large: forms and JSON are limited to ${limits.body} bytes (max_body_bytes in config/config.json; send files as multipart attachments)`;
  if (e.code === 'FST_REQ_FILE_TOO_LARGE') return `413 - Upload too large: the limit is ${limits.upload} bytes (max_upload_bytes in config/config.json)`;
  if (err instanceof RqError && err.code === 'RQ_ERR_NO_REPLY') return `503 - ${err.message}`;
  // Our own texts already carry the classic "<code> - " prefix where the spec has one.
  if (/^\d{3}\b/.test(err.message)) return err.message;
  if (status >= 500 && !(err instanceof RqError)) ctx.log.error({ err }, 'request failed');
  return `${status} - ${err.message}`;
}

export async function buildApp(deps: WebDeps): Promise<FastifyInstance> {
  const ctx = new WebContext(deps);
  const maxUpload = deps.config.max_upload_bytes ?? DEFAULT_MAX_UPLOAD_BYTES;
  const limits: Limits = { body: deps.config.max_body_bytes ?? FORM_BODY_LIMIT, field: deps.config.max_field_bytes ?? FIELD_LIMIT, upload: maxUpload };
  const hosts = allowedHostNames(deps.config);
  const app = Fastify({
    logger: false,
    bodyLimit: limits.body,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: ctx.limits.keepAliveTimeoutMs,
    // headersTimeout also cuts a connection that sends nothing; it is checked every second, not node's 30 s.
    // Host is checked by admissionProblem, which answers a missing one in the client's terms (node's own 400 has no body).
    http: { headersTimeout: ctx.limits.headersTimeoutMs, connectionsCheckingInterval: CONNECTIONS_CHECK_MS, requireHostHeader: false },
    clientErrorHandler: clientRefusal,
    // At close only idle connections go at once: a request in flight gets its reply (web-shutdown.ts).
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    routerOptions: {
      ignoreDuplicateSlashes: true,
      ignoreTrailingSlash: true,
      maxParamLength: MAX_PARAM_LENGTH,
      querystringParser: (s: string) => parseQuery(s),
    },
    frameworkErrors: routerRefusals({ hosts, allowedIps: deps.config.allowed_ips, auth: deps.config.basic_auth, maxParamLength: MAX_PARAM_LENGTH }),
  });

  limitConnections(app.server, ctx.limits, ctx.log);
  // Before the graceful close: a drained early answer still says Connection: close while the web stops.
  installBoundedDrain(app);
  installGracefulClose(app, ctx.limits.shutdownGraceMs, ctx.log);
  // Every 503 and 429 says when to come back, whichever layer refused (a busy queue socket, say).
  app.addHook('onSend', async (_req, reply, payload) => {
    if ((reply.statusCode === 503 || reply.statusCode === 429) && !reply.hasHeader('Retry-After')) reply.header('Retry-After', String(ctx.limits.retryAfterS));
    return payload;
  });

  app.decorate('rqFieldLimit', limits.field);
  app.decorate('rqUploadLimit', limits.upload);

  app.addHook('onRequest', async (req, reply) => {
    const refused = admissionProblem(req, reply, hosts, deps.config.allowed_ips);
    if (refused) return reply.code(refused.status).type('text/plain; charset=utf-8').send(refused.text);
  });
  // rq-beyond §B1.5: metrics_public lets a Prometheus without credentials scrape /metrics and /healthz, and nothing else.
  const publicRoutes = deps.config.metrics_public ? ['/metrics', '/healthz'].map((p) => ctx.urls.prefix + p) : [];
  if (deps.config.basic_auth)
    await installBasicAuth(app, deps.config.basic_auth, publicRoutes, deps.config.fleet ? fleetPeer(deps.mgr, ctx.urls.prefix, ctx.log) : undefined);
  app.addHook('onRequest', async (req, reply) => {
    const problem = originProblem(req);
    if (problem) return reply.code(403).type('text/plain; charset=utf-8').send(problem);
  });
  app.addHook('onRequest', async (req) => {
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') throw RqError.of('RQ_ERR_ENCODED_BODY', shown(encoding));
  });

  // Query, form and JSON bodies are parsed before any route runs; their depth, and that the query gives each parameter once, are checked before any code walks them.
  app.addHook('preHandler', async (req) => {
    requireShallow(req.query, 'query string');
    requireCleanQuery(req.query);
    if (typeof req.body === 'object' && req.body !== null) requireShallow(req.body, 'request body');
  });

  // Open event streams and log tails get their `end` event at once: they would otherwise hold the close until its deadline.
  app.addHook('preClose', async () => {
    ctx.sse.endAll();
    ctx.eventHub.close();
  });

  installFormRefusals(app, ctx);
  installJsonErrors(app, ctx);

  app.addHook('onResponse', async (req, reply) => {
    ctx.log.debug({ method: req.method, url: req.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });

  await app.register(cookie, { secret: deps.cookieSecret });
  await app.register(formbody, { parser: (s: string) => parseFormBody(s), bodyLimit: limits.body });
  // preservePath: a file name with path parts is refused (attachmentNameProblem), not cut to its base name.
  await app.register(multipart, { limits: { fileSize: maxUpload, fieldSize: limits.field }, preservePath: true });
  // Classic clients post other content types too; their parameters then come from the query string.
  installJsonBody(app, limits.body);
  installJsonLines(app, limits.body);
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limits.body }, (_req, _body, done) => done(null, {}));

  app.setErrorHandler(async (raw: FastifyError | RqError, req: FastifyRequest, reply: FastifyReply) => {
    const err = headerRefusal(raw, req.headers.authorization) ?? raw;
    const status = statusOf(err);
    if (reply.sent || reply.raw.headersSent) return;
    // A refusal before the route read a multipart body (an unknown queue) answers in the format a field of it asks for;
    // not one at the door (credentials, Host, address, size, rate): the body of a request not let in is never read.
    if (status < 500 && !AT_THE_DOOR.has(status)) {
      await ctx.learnBodyFormat(req);
      // The read may have ended the exchange (the client gone): nothing is sent twice.
      if (reply.sent || reply.raw.headersSent) return;
    }
    if (status === 404) return ctx.notFoundPage(req, reply, err.message);
    const text = messageOf(err, status, ctx, limits);
    if (status < 500) ctx.log.debug({ url: req.url, status, err: err.message }, 'request refused');
    // A JSON client gets it as ["fail", text] (json-errors.ts).
    return ctx.text(reply, status, text);
  });

  app.setNotFoundHandler((req, reply) => {
    const p = req.url.split('?')[0].replace(/\/{2,}/g, '/');
    const prefix = ctx.urls.prefix;
    // Outside relative_root the classic server answered in plain text.
    if (prefix && p !== prefix && !p.startsWith(`${prefix}/`)) return ctx.text(reply, 404, `Not Found: ${p}`);
    return ctx.notFoundPage(req, reply);
  });

  await app.register(
    async (scope) => {
      await registerApiDocs(scope, ctx);
      await scope.register(fastifyStatic, { root: deps.publicDir, prefix: '/', index: false, wildcard: false, serve: true });
      // Static files are not API: left out of the document, as @fastify/static leaves its own.
      scope.get('/js/ansi_up.js', { schema: { hide: true } }, (_req, reply) => reply.sendFile(path.basename(deps.ansiUpFile), path.dirname(deps.ansiUpFile)));
      serveChartLib(scope, deps.chartLib);
      scope.get('/favicon.ico', { schema: { hide: true } }, (_req, reply) => reply.type('image/svg+xml').sendFile('favicon.svg'));
      registerRoutes(scope, ctx, maxUpload);
    },
    { prefix: ctx.urls.prefix },
  );
  return app;
}
