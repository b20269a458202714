// Request parameters as the classic Sinatra app saw them: path segments, query and form body merged.
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { RqError, shown } from '../errors.js';
import { MAX_PARTS, readMultipart } from './multipart-reader.js';
import { type Params, nestParams, requireShallow } from './params.js';

/** A path parameter (already %-decoded by the router); validation is the caller's job. */
export function pathParam(req: FastifyRequest, name: string): string {
  const v = (req.params as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : '';
}

/** Bodies that are JSON: the client speaks JSON and hears its errors in JSON. */
const JSON_BODY_TYPES = new Set(['application/json', 'application/x-ndjson', 'application/jsonl']);

function asParams(v: unknown): Params {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Params) : {};
}

/** The media type of the request's body, lower case, without parameters. */
export function bodyType(req: FastifyRequest): string {
  return String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
}

/** The content types whose bodies rq reads as parameters or messages (form, JSON, JSON lines, multipart). */
const READ_BODIES = ['application/x-www-form-urlencoded', 'application/json', 'application/x-ndjson', 'application/jsonl', 'multipart/form-data'];

/**
 * The content type of a body that no parser reads, when the request has one (a classic client may
 * send such a body with its parameters in the query string; the caller decides); null otherwise.
 */
export function unreadBodyType(req: FastifyRequest): string | null {
  const type = bodyType(req);
  const length = Number(req.headers['content-length'] ?? (req.headers['transfer-encoding'] ? 1 : 0));
  if (type === '' || !(length > 0) || READ_BODIES.includes(type)) return null;
  return type;
}

/**
 * Whether a client asked for JSON, for a refusal that comes before the route reads its format:
 * `x_format` in a parsed body (a form or JSON; the body wins, as in plainParams) or in the query,
 * else the URL's extension (`.json`; `.txt` is text; not an attachment's name), else a JSON body (`application/json`, JSON
 * lines), else an Accept naming application/json (ahead of text/html when it names both). A
 * multipart body's fields are the route's to read (multipartFormat).
 */
export function asksForJson(req: FastifyRequest): boolean {
  const bodyFormat = asParams(req.body).x_format;
  const format = typeof bodyFormat === 'string' ? bodyFormat : asParams(req.query).x_format;
  if (typeof format === 'string') return format === 'json';
  // An attachment's own name (`report.txt`, `data.json`) says nothing of the format its client reads.
  const path = req.url.split('?')[0];
  const named = !/\/attach\/[^/]*$/.test(path);
  if (named && path.endsWith('.json')) return true;
  if (named && path.endsWith('.txt')) return false;
  if (JSON_BODY_TYPES.has(bodyType(req))) return true;
  const accept = String(req.headers.accept ?? '').toLowerCase();
  const json = accept.indexOf('application/json');
  const htmlAt = accept.indexOf('text/html');
  return json >= 0 && (htmlAt < 0 || json < htmlAt);
}

/** How long a refusal waits for the text fields of a multipart body that no route read (multipartFormat). */
const FORMAT_FIELDS_MS = 5000;

/**
 * The `x_format` among the text fields ahead of a multipart body's first file, for a refusal that
 * came before its route read the body (an unknown queue): so `curl -F x_format=json …` hears it in
 * JSON, as a form post does. No file is read or stored: at the first one the parser is stopped and
 * the rest is drained after the answer (bounded-drain.ts). A body that does not parse, or whose
 * fields take longer than FORMAT_FIELDS_MS, says nothing, and the refusal keeps its other format.
 */
export async function multipartFormat(req: FastifyRequest): Promise<string | undefined> {
  let format: string | undefined;
  const read = (async () => {
    for await (const part of req.parts({ limits: { fieldSize: req.server.rqFieldLimit, parts: MAX_PARTS } })) {
      if (part.type === 'file') {
        part.file.destroy();
        return;
      }
      if (part.fieldname === 'x_format' && typeof part.value === 'string') format = part.value;
    }
  })().catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([read, new Promise((resolve) => (timer = setTimeout(resolve, FORMAT_FIELDS_MS)))]);
  clearTimeout(timer);
  return format;
}

/** The query's and a parsed (not multipart) body's parameters, the body's over the query's: what the routes read of a request. */
export function plainParams(req: FastifyRequest): Params {
  return { ...asParams(req.query), ...asParams(req.body) };
}

/**
 * Query and body parameters (body wins). Multipart bodies are read here too, their file parts
 * drained unread: only attach/new keeps a file, and it streams the body itself. `onField` sees
 * each multipart text field as it arrives (an x_format=json before a fault makes its refusal JSON).
 */
export async function readParams(req: FastifyRequest, onField?: (name: string, value: string) => void): Promise<Params> {
  if (!req.isMultipart()) return plainParams(req);
  const pairs: [string, string][] = [];
  await readMultipart(req, {
    fileSize: req.server.rqUploadLimit,
    onField: (name, value) => {
      pairs.push([name, value]);
      onField?.(name, value);
    },
    onFile: async (part) => void part.file.resume(),
  });
  const fields = nestParams(pairs);
  requireShallow(fields, 'multipart fields');
  return { ...asParams(req.query), ...fields };
}

/**
 * brightroll's `POST /q/<q>/new_message` with an `application/json` body: the body is the message
 * itself, `_method` included (spec §15). A JSON body with a `mesg` key is rq's own shape and is
 * read as parameters instead; `undefined` for that and for every other content type.
 */
export function bareJsonMessage(req: FastifyRequest): Record<string, unknown> | undefined {
  if (bodyType(req) !== 'application/json') return undefined;
  const body = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw RqError.of('RQ_ERR_INVALID_JSON', `JSON body: expected a JSON object (the message, or {"mesg": {...}}), received ${shown(body)}`);
  }
  if (Object.hasOwn(body, 'mesg')) return undefined;
  requireShallow(body, 'JSON body');
  return { ...(body as Record<string, unknown>) };
}
