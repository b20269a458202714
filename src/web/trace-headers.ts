// The W3C `traceparent` and `tracestate` request headers of an HTTP create: the trace context of a message whose body carries none.
import type { FastifyRequest } from 'fastify';
import { invalidField } from '../errors.js';
import { type TraceContext, readTraceparent, readTracestate, traceFrom } from '../message/trace-context.js';

/**
 * The headers' pair, checked here so a refusal names the header. A tracestate header without a
 * traceparent one is ignored, as W3C Trace Context has a receiver do; node joins repeated headers
 * with commas, which makes two traceparents invalid and two tracestates one list, as the spec reads them.
 */
function headerTrace(req: FastifyRequest): TraceContext {
  const parent = req.headers.traceparent;
  if (parent === undefined || parent === '') return {};
  const traceparent = readTraceparent(parent, invalidField, 'traceparent header');
  const state = req.headers.tracestate;
  return state === undefined || state === '' ? { traceparent } : { traceparent, tracestate: readTracestate(state, invalidField, 'tracestate header') };
}

/**
 * Sets the trace context of a create's `fields` from the request headers when the body has neither
 * field: a body that names its trace wins whole (an instrumented HTTP client adds headers for its
 * own request span, while the body says which trace the message belongs to).
 */
export function withHeaderTrace(req: FastifyRequest, fields: Record<string, unknown>): Record<string, unknown> {
  return Object.assign(
    fields,
    traceFrom(fields, () => headerTrace(req)),
  );
}
