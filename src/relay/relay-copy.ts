// The far copy of a relayed message (spec §11.2): the fields the classic relay sends with its prep, count+1.
import { JOB_FIELDS } from '../message/job-fields.js';
import { RUN_LIMIT_FIELDS } from '../message/run-limits.js';
import { TRACE_FIELDS, type TraceContext } from '../message/trace-context.js';

/** Copied when present, in the classic order, then the run-policy fields (rq-beyond §B1.13) and the run limits; the trace context, so the far run continues the trace. */
export const RELAY_FIELDS = [
  'dest',
  'src',
  'count',
  'max_count',
  'param1',
  'param2',
  'param3',
  'param4',
  'post_run_webhook',
  'orig_msg_id',
  'tags',
  ...TRACE_FIELDS,
  ...JOB_FIELDS,
  ...RUN_LIMIT_FIELDS,
] as const;

/**
 * The `mesg` object of the prep request. force_remote and due are not carried (spec §11.1). `trace`,
 * the context the relay's run was given, replaces the message's pair whole when it has a
 * traceparent: with rq exporting spans it is the hop's span, under which the far host's spans nest.
 */
export function relayCopy(msg: Record<string, unknown>, trace: TraceContext = {}): Record<string, unknown> {
  const from = trace.traceparent === undefined ? msg : { ...msg, traceparent: trace.traceparent, tracestate: trace.tracestate };
  const out: Record<string, unknown> = {};
  for (const f of RELAY_FIELDS) if (from[f] !== undefined && from[f] !== null) out[f] = from[f];
  out.count = (Number(msg.count) || 0) + 1;
  out._method = 'prep';
  return out;
}
