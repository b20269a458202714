// The toolkit every route uses: validated path names, queue calls, pages with flash, 303 redirects.
import type { QueueClient } from '../ipc/queue-client.js';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError, shown, statusOf } from '../errors.js';
import type { Answer, Refusal } from '../ipc/answer.js';
import { partialOf, partialStatus } from '../ipc/partial-reply.js';
import { type RootPaths, queueDir, queuePaths, rootPaths } from '../config/paths.js';
import { type QueueNameRoom, queueNameFitProblem, queueNameRoom } from '../config/socket-paths.js';
import { isMsgId, queueNameProblem } from '../message/names.js';
import { discoverQueues } from '../mgr/queue-dirs.js';
import { DEFAULT_MAX_EVENT_STREAMS, EventHub } from './event-hub.js';
import { type Flash, FlashStore } from './flash.js';
import { type Params, textParam } from './params.js';
import { asksForJson, multipartFormat, readParams } from './request-params.js';

import { rubyInspect } from './ruby-inspect.js';
import { SseLimits } from './sse-limits.js';
import { Urls } from './urls.js';
import { type SafeHtml, html } from './views/html.js';
import { layout } from './views/layout.js';
import type { WebDeps } from './web-deps.js';
import { type WebLimits, webLimits } from '../config/web-limits.js';

export interface PageOptions {
  queue?: string;
  status?: number;
  scripts?: string[];
  styles?: string[];
  bare?: boolean;
}

/** Queues that are never re-routed to rq_router (spec §9.2). */
const NOT_ROUTED = new Set(['relay', 'cleaner']);

export class WebContext {
  readonly urls: Urls;
  readonly flash: FlashStore;
  readonly paths: RootPaths;
  readonly now: () => number;
  /** The queues' live feeds, shared by every GET /events stream. */
  readonly eventHub: EventHub;
  readonly limits: WebLimits;
  /** Every open SSE stream (/events and log tails), counted against max_sse_streams. */
  readonly sse: SseLimits;
  /** Requests whose route said how errors answer: true as JSON arrays, false as text (an explicit x_format=html). */
  private readonly formats = new WeakMap<FastifyRequest, boolean>();
  /** Requests answered with a classic text that stays text (classicText). */
  private readonly classicTexts = new WeakSet<FastifyRequest>();
  /** Its presence re-routes message-level routes to rq_router (spec §9.2). */
  private readonly routerRules: string;
  /** How long a queue name this root can hold (its socket paths), worked out once. */
  private readonly nameRoom: QueueNameRoom;

  constructor(readonly deps: WebDeps) {
    this.urls = new Urls(deps.config.relative_root, `${deps.config.host}:${deps.config.port}`);
    this.flash = new FlashStore(this.urls.base);
    this.paths = rootPaths(deps.root);
    this.routerRules = path.join(this.paths.config, 'rq_router_rules.rb');
    this.nameRoom = queueNameRoom(deps.root);
    this.now = deps.now ?? Date.now;
    this.limits = webLimits(deps.config);
    this.sse = new SseLimits(this.limits.maxSseStreams, this.limits.maxTailsPerMessage);
    this.eventHub = new EventHub({
      feedPath: (q) => queuePaths(deps.root, q).eventsSock,
      // As the dashboard lists them: rq-mgr's workers, or the queue dirs while it is down.
      listQueues: () => deps.mgr.queues().catch(() => discoverQueues(deps.root)),
      log: deps.log,
      maxListeners: deps.config.max_event_streams ?? DEFAULT_MAX_EVENT_STREAMS,
    });
  }

  get log() {
    return this.deps.log;
  }

  markJson(req: FastifyRequest): void {
    this.formats.set(req, true);
  }

  /** The request asked for HTML (`x_format=html` in its body): its errors answer text, whatever its Accept says. */
  markHtml(req: FastifyRequest): void {
    this.formats.set(req, false);
  }

  /**
   * Whether errors answer `["fail", text]`: the route said so (x_format in the body), or the
   * client did (a `.json` URL, x_format in the query, a JSON body, Accept): request-params.ts `asksForJson`.
   */
  wantsJson(req: FastifyRequest): boolean {
    return this.formats.get(req) ?? asksForJson(req);
  }

  /**
   * Before a refusal answers: a multipart body that nothing has read yet may say its format in a
   * field (`-F x_format=json`), which asksForJson cannot see; its fields ahead of the first file are
   * read for it (multipartFormat). A request whose route already chose its format is left as it is.
   */
  async learnBodyFormat(req: FastifyRequest): Promise<void> {
    if (this.formats.has(req) || !req.isMultipart() || req.raw.readableDidRead) return;
    const format = await multipartFormat(req);
    if (format === 'json') this.markJson(req);
    else if (format === 'html') this.markHtml(req);
  }

  /** The request's parameters; a multipart x_format=json field marks its errors JSON as soon as it is read, so a body refused after it answers JSON. */
  params(req: FastifyRequest): Promise<Params> {
    return readParams(req, (name, value) => {
      if (name === 'x_format' && value === 'json') this.markJson(req);
    });
  }

  /**
   * An action's parameters, and whether it asked for JSON: `x_format=json`, or without x_format a JSON body or an
   * Accept of application/json (asksForJson), so a JSON client hears JSON, not a 303; then its errors answer JSON too.
   */
  async actionParams(req: FastifyRequest): Promise<{ p: Params; json: boolean }> {
    const p = await this.params(req);
    return { p, json: this.actionFormat(req, p) };
  }

  /** Whether an action's client asked for JSON (actionParams), its errors' format set to match; for a route that read its parameters itself. */
  actionFormat(req: FastifyRequest, p: Params): boolean {
    const format = textParam(p, 'x_format');
    const json = format === 'json' || (format === undefined && asksForJson(req));
    if (json) this.markJson(req);
    else if (format === 'html') this.markHtml(req);
    return json;
  }

  /** A queue name from the URL: must be a valid name of an existing queue, else 404 (nothing touched). */
  async requireQueue(name: string): Promise<string> {
    // A name too long for this root's socket paths is no queue of it, even with a directory: its socket, cut short, is another queue's.
    const problem = queueNameProblem(name) ?? queueNameFitProblem(this.nameRoom, name);
    if (problem) throw RqError.of('RQ_ERR_QUEUE_NOT_FOUND', problem);
    if (await this.queueExists(name)) return name;
    // A name rq-mgr refused (scandir/<q> without an executable run, …) says why and how to fix it.
    const why = await this.deps.mgr.whyNotQueue(name);
    throw why ? RqError.of('RQ_ERR_QUEUE_NOT_RUNNING', name, why) : RqError.of('RQ_ERR_QUEUE_NOT_FOUND', name);
  }

  /** A new queue's name that this root cannot hold (its socket paths would not fit): 400 naming `field`, before rq-mgr is asked. */
  requireNameFits(name: unknown, field: string): void {
    const problem = typeof name === 'string' ? queueNameFitProblem(this.nameRoom, name, field) : null;
    if (problem) throw RqError.of('RQ_ERR_INVALID_QUEUE_NAME', problem);
  }

  /** A message id from the URL (an acked error keeps its dot), else 404. */
  requireMsgId(id: string): string {
    if (!isMsgId(id)) throw RqError.of('RQ_ERR_MSG_NOT_FOUND', `expected a message id like 20261121.1643.46.613.2164022, received ${shown(id)}`);
    return id;
  }

  // These two run on every queue route. Synchronous on purpose: a cached-inode stat takes ~2 µs,
  // where the promise versions cost ~50 µs of CPU each (thread-pool hop, and an Error for every miss).
  // queueDir, not queuePaths: the whole set of ~20 paths takes 17-27 µs a call warm, the one path ~1 µs.
  async queueExists(name: string): Promise<boolean> {
    try {
      return fs.statSync(queueDir(this.deps.root, name), { throwIfNoEntry: false })?.isDirectory() ?? false;
    } catch {
      return false;
    }
  }

  /** The queue a message-level route (R) talks to: rq_router when its rules file exists (spec §9.2). */
  async routed(queue: string): Promise<string> {
    if (NOT_ROUTED.has(queue)) return queue;
    return fs.existsSync(this.routerRules) ? 'rq_router' : queue;
  }

  /** Validated queue from the URL, re-routed for (R) routes, that exists. */
  async requireRoutedQueue(name: string): Promise<string> {
    const problem = queueNameProblem(name);
    if (problem) throw RqError.of('RQ_ERR_QUEUE_NOT_FOUND', problem);
    return this.requireQueue(await this.routed(name));
  }

  /** The typed client of a queue over the shared pool; its calls throw RQ_ERR_NO_REPLY when the queue process does not answer. */
  queue(name: string): QueueClient {
    return this.deps.queues.client(name);
  }

  /** Renders a page inside the layout, showing (and consuming) the pending flash. */
  page(req: FastifyRequest, reply: FastifyReply, body: SafeHtml, opts: PageOptions = {}): FastifyReply {
    const doc = layout(
      {
        queue: opts.queue,
        env: this.deps.config.env ?? null,
        flash: this.flash.take(req, reply),
        urls: this.urls,
        now: new Date(this.now()),
        scripts: opts.scripts,
        styles: opts.styles,
        bare: opts.bare,
        fleet: this.deps.config.fleet !== undefined,
      },
      body,
    );
    return reply
      .code(opts.status ?? 200)
      .type('text/html; charset=utf-8')
      .send(doc.value);
  }

  /** The classic Not Found page: layout + `<h2>Not Found</h2>`, flash included; `["fail", reason]` to a JSON client. */
  notFoundPage(req: FastifyRequest, reply: FastifyReply, reason?: string): FastifyReply {
    if (this.wantsJson(req)) return this.json(reply, ['fail', reason ?? `Not Found: ${req.url.split('?')[0]}`], 404);
    return this.page(req, reply, html`<h2 id="not-found">Not Found</h2>${reason ? html`<p class="muted" id="not-found-reason">${reason}</p>` : ''}`, {
      status: 404,
    });
  }

  /** 303 See Other to an absolute URL, optionally leaving a flash for the next page. */
  redirect(reply: FastifyReply, location: string, flash?: Flash): FastifyReply {
    if (flash) this.flash.set(reply, flash);
    return reply.code(303).header('Location', location).type('text/plain; charset=utf-8').send('');
  }

  /** 303 to a path of this app (e.g. urls.queue(q)). */
  redirectTo(req: FastifyRequest, reply: FastifyReply, absPath: string, flash?: Flash): FastifyReply {
    return this.redirect(reply, this.urls.absolute(req, absPath), flash);
  }

  /**
   * A refusal text the classic daemon sends even in its JSON mode (spec §9.6: `400 - Invalid method
   * param`, `503 - Service Unavailable - Operationally Down`): kept for a client that only took the
   * default format, `["fail", text]` to one that asked for JSON itself (`asked`: a JSON body,
   * x_format=json, or what asksForJson reads where no x_format says otherwise).
   */
  classicText(req: FastifyRequest, reply: FastifyReply, status: number, text: string, asked: boolean): FastifyReply {
    if (asked) return this.json(reply, ['fail', text.replace(/^\d{3} - /, '')], status);
    this.classicTexts.add(req);
    return this.text(reply, status, text);
  }

  /** Whether the request's refusal is a classic text to leave as it is (json-errors.ts). */
  keepsText(req: FastifyRequest): boolean {
    return this.classicTexts.has(req);
  }

  /** A plain-text reply such as `500 - Couldn't restart queue. Internal error.` */
  text(reply: FastifyReply, status: number, body: string): FastifyReply {
    return reply.code(status).type('text/plain; charset=utf-8').send(body);
  }

  /**
   * The status of a queue's or rq-mgr's refusal: its catalogue code's (409 for a message in the
   * wrong state, 404 for one not found…), 400 for a refusal text of no known code (a validation
   * the request failed), 502 for a reply of no known shape. Classic clients keep their body text.
   * A command over many messages that failed on some (`["fail", text, report]`) has the status of
   * its first failure.
   */
  refusalStatus(a: Refusal): number {
    const partial = partialOf(a.raw);
    if (partial) return partialStatus(partial);
    if (a.code === 'RQ_ERR_REFUSED') return 400;
    return statusOf(a.code);
  }

  /** The classic `<status> - Couldn't <what>. <reply>.` text of a refusal, with the refusal's status; a JSON client gets the queue's refusal itself. */
  couldNot(reply: FastifyReply, r: Refusal, what: string): FastifyReply {
    if (this.wantsJson(reply.request)) return this.answerJson(reply, r);
    const status = this.refusalStatus(r);
    // A partial failure's text already counts and names its failures: its report is for JSON clients.
    return this.text(reply, status, `${status} - Couldn't ${what}. ${rubyInspect(partialOf(r.raw) ? ['fail', r.text] : r.raw)}.`);
  }

  /** A socket answer as JSON: its raw reply, with 200 or the refusal's status. */
  answerJson(reply: FastifyReply, a: Answer<unknown>): FastifyReply {
    return this.json(reply, a.raw, a.ok ? 200 : this.refusalStatus(a));
  }

  /** A socket answer as JSON: its value, or the refusal's reply with its status. */
  answerValue(reply: FastifyReply, a: Answer<unknown>): FastifyReply {
    return a.ok ? this.json(reply, a.value) : this.answerJson(reply, a);
  }

  /** A JSON reply with the exact body text the classic daemon sent, typed application/json. */
  json(reply: FastifyReply, value: unknown, status = 200): FastifyReply {
    return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(value));
  }
}

export const notice = (h: SafeHtml): Flash => ({ kind: 'notice', html: h });
export const error = (h: SafeHtml): Flash => ({ kind: 'error', html: h });
