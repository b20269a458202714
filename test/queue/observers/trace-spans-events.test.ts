// TraceSpans against events told by hand, its spans kept in memory: every way a run ends, a refused start, and a retry that starts again before its first run's end is told.
import * as api from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Message } from '../../../src/message/message.js';
import { TraceSpans } from '../../../src/queue/observers/trace-spans.js';
import { QueueEvents } from '../../../src/queue/status/queue-events.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TP = `00-${TRACE_ID}-${PARENT_ID}-01`;
/** Epoch milliseconds, as the queue's clock gives them (the SDK takes a small number for a performance.now() reading). */
const T0 = Date.UTC(2026, 0, 1);
const ENTERED = T0 + 1_000;

let exporter: InMemorySpanExporter;
let events: QueueEvents;
let spans: TraceSpans;
let clock: number;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  events = new QueueEvents();
  clock = T0;
  const tracing = { api, tracer: provider.getTracer('test'), close: () => provider.shutdown() };
  spans = new TraceSpans({ events, tracing, queue: () => 'q', fullId: (id) => `http://h:1/q/q/${id}`, enteredAt: () => ENTERED, now: () => clock });
});

const message = (fields: Partial<Message> = {}): Message => ({
  msg_id: 'm1',
  dest: 'q',
  orig_msg_id: '',
  count: 0,
  max_count: 15,
  due: 0,
  traceparent: TP,
  ...fields,
});
const exported = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string) => exported().filter((s) => s.name === name);
const ms = (t: api.HrTime) => Math.round(t[0] * 1000 + t[1] / 1e6) - T0;
const spanIdOf = (traceparent: string | undefined) => traceparent!.split('-')[2];

/** Starts a run of `msg` at `at`, as Runs and the spawn tell it; the script's traceparent. */
function start(msg: Message, at: number): string {
  const ctx = spans.runContext(msg, T0 + at);
  events.emit('started', { msg, pid: 1, script: '/s' });
  return ctx.traceparent!;
}

describe('TraceSpans', () => {
  it('a retry that starts again before its first run has ended keeps each run in its own span', () => {
    const msg = message();
    const first = start(msg, 2_000);
    // The retry puts the message back in the que, and another run's end starts it at once.
    events.emit('moved', { id: 'm1', from: 'run', to: 'que', actor: 'retry' });
    msg.failures = 1;
    const second = start(msg, 2_600);
    events.emit('finished', { msg, outcome: { state: 'que', statusText: 'RETRY 1/3', failure: 'exit' }, code: 3, signal: null, ms: 500 });
    events.emit('finished', { msg, outcome: { state: 'done', statusText: null }, code: 0, signal: null, ms: 100 });

    const [a, b] = named('run q');
    expect(a.spanContext().spanId).toBe(spanIdOf(first));
    expect(b.spanContext().spanId).toBe(spanIdOf(second));
    expect([ms(a.startTime), ms(a.endTime), ms(b.startTime), ms(b.endTime)]).toEqual([2_000, 2_500, 2_600, 2_700]);
    expect(a.attributes).toMatchObject({ 'rq.attempt': 1, 'rq.outcome': 'retry', 'rq.failure': 'exit', 'rq.exit_code': 3 });
    expect(a.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'RETRY 1/3' });
    expect(b.attributes).toMatchObject({ 'rq.attempt': 2, 'rq.outcome': 'done', 'rq.exit_code': 0 });
    expect(b.status.code).toBe(api.SpanStatusCode.UNSET);
    expect(named('wait q').map((w) => [ms(w.startTime), ms(w.endTime)])).toEqual([
      [1_000, 2_000],
      [1_000, 2_600],
    ]);
    for (const s of exported()) expect([s.spanContext().traceId, s.parentSpanContext?.spanId]).toEqual([TRACE_ID, PARENT_ID]);
  });

  it('a refused start leaves no span, and the next start is the one that counts', () => {
    const msg = message();
    spans.runContext(msg, T0 + 2_000);
    events.emit('moved', { id: 'm1', from: 'run', to: 'que', actor: 'dispatcher', reason: 'SCRIPTERROR' });
    start(msg, 3_000);
    events.emit('finished', { msg, outcome: { state: 'done', statusText: null }, code: 0, signal: null, ms: 10 });
    expect(exported().map((s) => [s.name, ms(s.startTime)])).toEqual([
      ['wait q', 1_000],
      ['run q', 3_000],
    ]);
  });

  it("ends a run cut by the stop, purged by a cancel, or failed by rq's own error, at the time it was told", () => {
    start(message({ msg_id: 'a' }), 100);
    start(message({ msg_id: 'b' }), 100);
    start(message({ msg_id: 'c' }), 100);
    clock = T0 + 400;
    events.emit('interrupted', { id: 'a' });
    events.emit('removed', { id: 'b', state: 'run' });
    events.emit('moved', { id: 'c', from: 'run', to: 'err', actor: 'rq', reason: 'rq internal error: EIO' });
    const runs = named('run q').map((s) => [s.attributes['rq.msg_id'], s.attributes['rq.outcome'], s.status.code, s.status.message, ms(s.endTime)]);
    expect(runs).toEqual([
      ['http://h:1/q/q/a', 'interrupted', api.SpanStatusCode.UNSET, undefined, 400],
      ['http://h:1/q/q/b', 'cancelled', api.SpanStatusCode.UNSET, undefined, 400],
      ['http://h:1/q/q/c', 'err', api.SpanStatusCode.ERROR, 'rq internal error: EIO', 400],
    ]);
  });

  it("a failed run's error is the status text its script set; the err outcome a finish wrote is rq.outcome", () => {
    const msg = message({ outcome: 'failed' });
    start(msg, 0);
    events.emit('line', { id: 'm1', line: 'run step 1', progress: 'step 1' });
    events.emit('line', { id: 'm1', line: 'err no such customer' });
    events.emit('line', { id: 'm1', line: 'beat' });
    events.emit('finished', { msg, outcome: { state: 'err', statusText: null, failure: 'err' }, code: 0, signal: null, ms: 5 });
    const [run] = named('run q');
    expect(run.status).toEqual({ code: api.SpanStatusCode.ERROR, message: 'no such customer' });
    expect(run.attributes['rq.outcome']).toBe('failed');
  });

  it('leaves an untraced or unsampled message alone: the script continues its own context', () => {
    const untraced = message({ traceparent: undefined });
    const unsampled = message({ traceparent: `00-${TRACE_ID}-${PARENT_ID}-00`, tracestate: 'k=v' });
    expect(spans.runContext(untraced, 0)).toBe(untraced);
    expect(spans.runContext(unsampled, 0)).toBe(unsampled);
    events.emit('started', { msg: unsampled, pid: 1, script: '/s' });
    events.emit('finished', { msg: unsampled, outcome: { state: 'done', statusText: null }, code: 0, signal: null, ms: 1 });
    expect(exported()).toEqual([]);
  });
});
