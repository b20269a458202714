// URLs under relative_root: links inside pages, and absolute Locations built from the request's Host.
import type { FastifyRequest } from 'fastify';
import { normaliseRelativeRoot } from '../message/message-id.js';

export class Urls {
  /** "/" or "/therq/": what every link starts with. */
  readonly base: string;
  /** "" or "/therq": the fastify route prefix. */
  readonly prefix: string;

  constructor(
    relativeRoot: string | undefined,
    /** Used when an HTTP/1.0 client sends no Host header. */
    private readonly fallbackHost: string,
  ) {
    this.base = normaliseRelativeRoot(relativeRoot);
    this.prefix = this.base === '/' ? '' : this.base.slice(0, -1);
  }

  /** A link to `p` (relative to the root, no leading slash), e.g. link('q/test') ⇒ "/therq/q/test". */
  link(p = ''): string {
    return this.base + p;
  }

  /** `/q/<q>` with the name escaped for a URL path. */
  queue(q: string, rest = ''): string {
    return this.link(`q/${encodeURIComponent(q)}${rest}`);
  }

  msg(q: string, id: string, rest = ''): string {
    return this.queue(q, `/${encodeURIComponent(id)}${rest}`);
  }

  /**
   * The HTML view of a tag: every queue's messages with it, or `queue`'s only. A path ending in
   * `.json` is the JSON answer, so a tag that itself ends in `.json` gets `x_format=html`.
   */
  tag(tag: string, queue?: string): string {
    const p = `tags/${encodeURIComponent(tag)}`;
    const suffix = tag.endsWith('.json') ? '?x_format=html' : '';
    return (queue === undefined ? this.link(p) : this.queue(queue, `/${p}`)) + suffix;
  }

  /** The JSON answer of a tag (`GET /tags/<tag>.json`, `GET /q/<q>/tags/<tag>.json`). */
  tagJson(tag: string, queue?: string): string {
    const p = `tags/${encodeURIComponent(tag)}.json`;
    return queue === undefined ? this.link(p) : this.queue(queue, `/${p}`);
  }

  origin(req: FastifyRequest): string {
    const host = req.headers.host ?? this.fallbackHost;
    return `${req.protocol}://${host}`;
  }

  /** Absolute URL of an absolute path on this server (the classic Location of a 303). */
  absolute(req: FastifyRequest, absPath: string): string {
    return this.origin(req) + absPath;
  }

  /**
   * Where a `back` parameter may send the browser: a path on this server or a URL of this host.
   * Anything else (another site, `//evil`, `javascript:`) falls back, so `back` cannot be an open redirect.
   */
  back(req: FastifyRequest, back: string | undefined, fallbackPath: string): string {
    if (back !== undefined && back !== '') {
      if (back.startsWith('/') && !back.startsWith('//') && !back.includes('\\')) {
        // Serialised as a browser would (percent-encoded, tabs and newlines dropped): as raw text in
        // the Location header, CR/LF or a character beyond Latin-1 made the reply a 500
        // (ERR_INVALID_CHAR) after the action had run, and markup characters went out unencoded.
        const u = new URL(back, 'http://rq.invalid');
        if (u.host === 'rq.invalid') return this.absolute(req, u.pathname + u.search + u.hash);
      }
      try {
        const u = new URL(back);
        if ((u.protocol === 'http:' || u.protocol === 'https:') && u.host === (req.headers.host ?? this.fallbackHost)) return u.href;
      } catch {
        // not a URL: fall back
      }
    }
    return this.absolute(req, fallbackPath);
  }
}
