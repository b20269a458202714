// The trace context rq's create commands take from their environment when given none: a script run by a traced message that sends follow-ups continues its trace.
import { invalidField } from '../errors.js';
import { TRACE_ENV, type TraceContext, readTraceparent, readTracestate } from '../message/trace-context.js';

/**
 * TRACEPARENT and TRACESTATE of `env`, as a queue gives them to a script. A value that is no W3C
 * one is left out with a warning, as a tracer starts a new trace on one it cannot read: the
 * environment is not what the command was asked to send, and a tracing mistake must not stop
 * a job's follow-up messages. A TRACESTATE goes only with its TRACEPARENT.
 */
export function envTraceContext(env: NodeJS.ProcessEnv, warn: (line: string) => void): TraceContext {
  const read = (name: 'traceparent' | 'tracestate'): string | undefined => {
    const v = env[TRACE_ENV[name]];
    if (v === undefined || v === '') return undefined;
    try {
      return (name === 'traceparent' ? readTraceparent : readTracestate)(v, invalidField, TRACE_ENV[name]);
    } catch (err) {
      warn(`rq: ${(err as Error).message}; sent without it`);
      return undefined;
    }
  };
  const traceparent = read('traceparent');
  if (traceparent === undefined) return {};
  const tracestate = read('tracestate');
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}
