// Request parameters as the classic Sinatra app saw them: path segments, query and form body merged.
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { type Params, nestParams } from './params.js';

/** A path parameter (already %-decoded by the router); validation is the caller's job. */
export function pathParam(req: FastifyRequest, name: string): string {
  const v = (req.params as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : '';
}

function asParams(v: unknown): Params {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Params) : {};
}

/**
 * Query and body parameters (body wins). Multipart bodies are read here too, their file parts
 * drained unread: only attach/new keeps a file, and it streams the body itself.
 */
export async function readParams(req: FastifyRequest): Promise<Params> {
  const query = asParams(req.query);
  if (!req.isMultipart()) return { ...query, ...asParams(req.body) };
  const pairs: [string, string][] = [];
  for await (const part of req.parts()) {
    if (part.type === 'file') part.file.resume();
    else pairs.push([part.fieldname, String(part.value)]);
  }
  return { ...query, ...nestParams(pairs) };
}
