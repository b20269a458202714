// The trace context a script's environment carries: rq's create commands take it when given none (a traced job's follow-ups continue its trace), and the relay gives it to the far copy.
import { invalidField } from '../errors.js';
import { TRACE_ENV, type TraceContext, readTraceparent, readTracestate } from '../message/trace-context.js';

/**
 * TRACEPARENT and TRACESTATE of `env`, as a queue gives them to a script. A value that is no W3C
 * one is left out and `warn` told why, as a tracer starts a new trace on one it cannot read: the
 * environment is not what the command was asked to send, and a tracing mistake must not stop
 * a job's follow-up messages. A TRACESTATE goes only with its TRACEPARENT.
 */
export function envTraceContext(env: NodeJS.ProcessEnv, warn: (problem: string) => void): TraceContext {
  const read = (name: 'traceparent' | 'tracestate'): string | undefined => {
    const v = env[TRACE_ENV[name]];
    if (v === undefined || v === '') return undefined;
    try {
      return (name === 'traceparent' ? readTraceparent : readTracestate)(v, invalidField, TRACE_ENV[name]);
    } catch (err) {
      warn((err as Error).message);
      return undefined;
    }
  };
  const traceparent = read('traceparent');
  if (traceparent === undefined) return {};
  const tracestate = read('tracestate');
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}
