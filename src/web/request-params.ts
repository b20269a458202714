// Request parameters as the classic Sinatra app saw them: path segments, query and form body merged.
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { RqError, shown } from '../errors.js';
import { type Params, nestParams, requireShallow } from './params.js';

/** A path parameter (already %-decoded by the router); validation is the caller's job. */
export function pathParam(req: FastifyRequest, name: string): string {
  const v = (req.params as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : '';
}

function asParams(v: unknown): Params {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Params) : {};
}

/**
 * A multipart body the parser gave up on (cut short, a broken part header) is the client's
 * mistake: a 400 that says so, not the parser's exception as a 500.
 */
export function malformedMultipart(err: unknown): unknown {
  if (err instanceof RqError || typeof (err as { statusCode?: unknown })?.statusCode === 'number') return err;
  return RqError.of('RQ_ERR_BAD_BODY', 'a well-formed multipart/form-data body', `one that does not parse (${(err as Error)?.message ?? String(err)})`);
}

/** A multipart text field; one the parser cut at max_field_bytes is refused, never used cut. */
export function fieldPair(req: FastifyRequest, part: { fieldname: string; value: unknown; valueTruncated: boolean }): [string, string] {
  if (part.valueTruncated) throw RqError.of('RQ_ERR_FIELD_TOO_LARGE', shown(part.fieldname), req.server.rqFieldLimit);
  return [part.fieldname, String(part.value)];
}

/**
 * Query and body parameters (body wins). Multipart bodies are read here too, their file parts
 * drained unread: only attach/new keeps a file, and it streams the body itself.
 */
export async function readParams(req: FastifyRequest): Promise<Params> {
  const query = asParams(req.query);
  if (!req.isMultipart()) return { ...query, ...asParams(req.body) };
  const pairs: [string, string][] = [];
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') part.file.resume();
      else pairs.push(fieldPair(req, part));
    }
  } catch (err) {
    throw malformedMultipart(err);
  }
  const fields = nestParams(pairs);
  requireShallow(fields, 'multipart fields');
  return { ...query, ...fields };
}

/**
 * brightroll's `POST /q/<q>/new_message` with an `application/json` body: the body is the message
 * itself, `_method` included (spec §15). A JSON body with a `mesg` key is rq's own shape and is
 * read as parameters instead; `undefined` for that and for every other content type.
 */
export function bareJsonMessage(req: FastifyRequest): Record<string, unknown> | undefined {
  const type = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') return undefined;
  const body = req.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw RqError.of('RQ_ERR_INVALID_JSON', `JSON body: expected a JSON object (the message, or {"mesg": {...}}), received ${shown(body)}`);
  }
  if (Object.hasOwn(body, 'mesg')) return undefined;
  requireShallow(body, 'JSON body');
  return { ...(body as Record<string, unknown>) };
}
