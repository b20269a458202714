// Keep-alive HTTP client of the relay and webhook: form posts, GETs and streamed bodies, replies read as text.
import http from 'node:http';
import https from 'node:https';
import { RqError, errnoError } from '../errors.js';

export interface HttpReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface HttpClientOptions {
  /** Socket inactivity limit: no byte sent or received for this long ends the request. */
  idleTimeoutMs?: number;
  /** Replies are small JSON arrays; a larger body is cut here (the status still counts). */
  maxReplyBytes?: number;
  /** Sent with every request (a pool relay's credentials for the one host it talks to). */
  headers?: Record<string, string>;
}

/** Writes a request body; resolves when all of it has been handed to the socket. */
export type BodyWriter = (req: http.ClientRequest) => Promise<void>;

export interface RequestSpec {
  method: 'GET' | 'POST';
  headers?: Record<string, string | number>;
  body?: string | Buffer | { length: number; write: BodyWriter };
}

/** A reply body's JSON, or undefined when it is none (a page, a proxy's error, a cut body). */
export function bodyJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** A request that never got an HTTP reply (refused, reset, timed out): the far side may or may not have acted. */
export class HttpTransportError extends RqError {
  constructor(url: string, cause: unknown) {
    super('RQ_ERR_NO_REPLY', `${url}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/**
 * One agent per scheme with keepAlive, so the prep, attach and commit of a relay (and anything
 * after) reuse one connection to the far host instead of paying a handshake each.
 */
export class HttpClient {
  private readonly agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 4 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 4 }),
  };
  private readonly idleTimeoutMs: number;
  private readonly maxReplyBytes: number;
  private readonly headers: Record<string, string>;

  constructor(opts: HttpClientOptions = {}) {
    this.idleTimeoutMs = opts.idleTimeoutMs ?? 120_000;
    this.maxReplyBytes = opts.maxReplyBytes ?? 1 << 20;
    this.headers = opts.headers ?? {};
  }

  get(url: string): Promise<HttpReply> {
    return this.request(url, { method: 'GET', headers: { accept: 'application/json, */*' } });
  }

  /** POST application/x-www-form-urlencoded, as the classic clients do. */
  postForm(url: string, fields: Record<string, string>): Promise<HttpReply> {
    const body = new URLSearchParams(fields).toString();
    return this.request(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json, */*' }, body });
  }

  request(url: string, spec: RequestSpec): Promise<HttpReply> {
    let target: URL;
    try {
      target = new URL(url);
    } catch (err) {
      return Promise.reject(RqError.of('RQ_ERR_INVALID_FIELD', 'url', 'an http:// or https:// URL', JSON.stringify(url)).causedBy(err));
    }
    const agent = target.protocol === 'http:' || target.protocol === 'https:' ? this.agents[target.protocol] : null;
    if (!agent) return Promise.reject(RqError.of('RQ_ERR_INVALID_FIELD', 'url', 'an http:// or https:// URL', JSON.stringify(url)));
    const lib = target.protocol === 'https:' ? https : http;
    const body = spec.body;
    const headers: Record<string, string | number> = { ...this.headers, ...spec.headers };
    if (body !== undefined) headers['content-length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.length;

    return new Promise<HttpReply>((resolve, reject) => {
      let settled = false;
      let bodySent = typeof body !== 'object' || Buffer.isBuffer(body);
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        req.destroy();
        reject(err instanceof RqError ? err : new HttpTransportError(url, err));
      };
      const req = lib.request(target, { method: spec.method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < this.maxReplyBytes) chunks.push(c);
          size += c.length;
        });
        res.on('error', fail);
        res.on('end', () => {
          if (settled) return;
          settled = true;
          // Answered before taking the whole body: the connection cannot carry another request.
          if (!bodySent) req.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8').slice(0, this.maxReplyBytes) });
        });
      });
      req.setTimeout(this.idleTimeoutMs, () => fail(RqError.of('RQ_ERR_NO_REPLY', `no progress for ${this.idleTimeoutMs} ms`)));
      req.on('error', fail);
      if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) {
        req.end(body);
        return;
      }
      // A reply can come before the body is all sent (a 413, a crash): then the rest is dropped.
      body.write(req).then(
        () => {
          bodySent = true;
          req.end();
        },
        (err) => fail(err),
      );
    });
  }

  /** Closes the idle keep-alive sockets, so the process can end. */
  close(): void {
    this.agents['http:'].destroy();
    this.agents['https:'].destroy();
  }
}

/** Writes a chunk, waiting for 'drain' when the socket's buffer is full (never buffers a whole file). */
export async function writeChunk(req: http.ClientRequest, chunk: Buffer | string): Promise<void> {
  if (req.destroyed) throw errnoError('ECONNRESET', 'request closed while sending the body');
  if (req.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const drained = () => {
      req.off('close', closed);
      resolve();
    };
    const closed = () => {
      req.off('drain', drained);
      reject(errnoError('ECONNRESET', 'request closed while sending the body'));
    };
    req.once('drain', drained);
    req.once('close', closed);
  });
}
