// The spans a queue exports for a traced message (docs/observability.md): its wait in the que and each run (a relay hop's too), children of its traceparent, built from the queue's events.
import type * as Api from '@opentelemetry/api';
import type { Message } from '../../message/message.js';
import { type TraceContext, traceParentOf, traceparentFor } from '../../message/trace-context.js';
import type { Outcome } from '../rules/completion.js';
import { parseLine } from '../rules/pipe-protocol.js';
import { attemptOf } from '../rules/retry-policy.js';
import type { QueueEventMap, QueueEvents } from '../status/queue-events.js';
import type { Tracing } from './otlp-tracing.js';

export interface TraceSpansDeps {
  events: QueueEvents;
  tracing: Tracing;
  queue: () => string;
  fullId: (id: string) => string;
  /** When a message entered the que: its making or its last return (the stats' own clock of the wait). */
  enteredAt: (msg: Message) => number;
  now: () => number;
}

/** A run whose span is open: started before its script's environment was built, ended by the event that ends the run. */
interface OpenRun {
  span: Api.Span;
  parent: Api.Context;
  startMs: number;
  waitFrom: number;
  /** rq.queue, rq.msg_id and rq.attempt, which the wait span has too. */
  base: Api.Attributes;
  relay: boolean;
  /** The status text the script's last line set: a failed run's error message. */
  status?: string;
  /** The far copy a relay hop made, from its `relayed` line. */
  farId?: string;
}

/** Longest status text kept as a span's error message. */
const MAX_STATUS_TEXT = 512;

/** rq.outcome of a run: done, relayed, retry, resend, or err with the outcome rq-beyond §B1.3 wrote (failed, cancelled, …). */
function outcomeName(o: Outcome, msg: Message): string {
  if (o.state === 'que') return o.failure ? 'retry' : 'resend';
  if (o.state === 'err') return typeof msg.outcome === 'string' ? msg.outcome : 'err';
  return o.state;
}

/** The built-in queue whose script sends a message to the far host its dest names (scripts/relay). */
const RELAY_QUEUE = 'relay';

/** A run of the relay queue is a hop to the host of its http dest; a far copy keeps that dest, so the queue tells, not the dest. */
function relayDest(queue: string, msg: Message): string | null {
  return queue === RELAY_QUEUE && /^https?:\/\//i.test(msg.dest) ? msg.dest : null;
}

export class TraceSpans {
  /**
   * Open runs by message id, oldest first: a retry or resend due at once may start the message
   * again (its worker slot is free) before the end of the run before it has been told.
   */
  private readonly runs = new Map<string, OpenRun[]>();

  constructor(private readonly d: TraceSpansDeps) {
    const { events } = d;
    events.on('started', ({ msg }) => this.started(msg));
    events.on('line', ({ id, line }) => this.line(id, line));
    events.on('finished', (e) => this.finished(e));
    events.on('interrupted', ({ id }) => this.end(id, { 'rq.outcome': 'interrupted' }));
    events.on('removed', ({ id, state }) => state === 'run' && this.end(id, { 'rq.outcome': 'cancelled' }));
    events.on('moved', ({ id, from, to, actor, reason }) => {
      if (from !== 'run') return;
      // A start refused (SCRIPTERROR, no fds, a full disk): nothing ran, and the message waits on.
      if (to === 'que' && actor === 'dispatcher') this.forget(id, 'newest');
      // rq's own error ended the run, with no finished event after it.
      else if (actor === 'rq') this.end(id, { 'rq.outcome': 'err' }, reason ?? 'rq internal error');
    });
  }

  /**
   * The trace context a run's script continues: its run span's when the message is traced and
   * sampled (the script's spans then nest under rq's run), else the message's own. Called before
   * the script's environment is built; the span's end waits for the run's.
   */
  runContext(msg: Message, startMs: number): TraceContext {
    if (typeof msg.traceparent !== 'string') return msg;
    const { api, tracer } = this.d.tracing;
    const tp = traceParentOf(msg.traceparent);
    const parent = api.trace.setSpanContext(api.ROOT_CONTEXT, {
      traceId: tp.traceId,
      spanId: tp.parentId,
      traceFlags: tp.flags,
      isRemote: true,
      ...(typeof msg.tracestate === 'string' ? { traceState: api.createTraceState(msg.tracestate) } : {}),
    });
    const queue = this.d.queue();
    const base: Api.Attributes = { 'rq.queue': queue, 'rq.msg_id': this.d.fullId(msg.msg_id), 'rq.attempt': attemptOf(msg) };
    const dest = relayDest(queue, msg);
    const name = dest === null ? `run ${queue}` : `relay ${new URL(dest).host}`;
    const kind = dest === null ? api.SpanKind.CONSUMER : api.SpanKind.PRODUCER;
    const attributes = dest === null ? base : { ...base, 'rq.relay.dest': dest };
    const span = tracer.startSpan(name, { kind, startTime: startMs, attributes }, parent);
    // Not sampled by the sender (or the sampler): no span is recorded, and the script continues the sender's.
    if (!span.isRecording()) return msg;
    const open = { span, parent, startMs, waitFrom: this.d.enteredAt(msg), base, relay: dest !== null };
    this.runs.set(msg.msg_id, [...(this.runs.get(msg.msg_id) ?? []), open]);
    const own = span.spanContext();
    return {
      traceparent: traceparentFor(own.traceId, own.spanId, own.traceFlags),
      ...(typeof msg.tracestate === 'string' ? { tracestate: msg.tracestate } : {}),
    };
  }

  /** The script is running: the wait ended when its run began. */
  /** Takes the message's oldest or newest open run out of the open ones. */
  private forget(id: string, which: 'oldest' | 'newest'): OpenRun | undefined {
    const open = this.runs.get(id);
    const run = which === 'oldest' ? open?.shift() : open?.pop();
    if (open?.length === 0) this.runs.delete(id);
    return run;
  }

  /** The run that started last: the one a start, a refusal and the script's lines are about. */
  private newest(id: string): OpenRun | undefined {
    return this.runs.get(id)?.at(-1);
  }

  private started(msg: Message): void {
    const run = this.newest(msg.msg_id);
    if (!run) return;
    const wait = this.d.tracing.tracer.startSpan(
      `wait ${this.d.queue()}`,
      { startTime: Math.min(run.waitFrom, run.startMs), attributes: run.base },
      run.parent,
    );
    wait.end(run.startMs);
  }

  private line(id: string, line: string): void {
    const run = this.newest(id);
    if (!run) return;
    const pl = parseLine(line);
    if (pl.keyword === 'beat') return;
    run.status = pl.arg ?? '';
    if (run.relay && pl.keyword === 'relayed' && run.farId === undefined) run.farId = run.status.trim();
  }

  private finished({ msg, outcome, code, signal, ms, usage }: QueueEventMap['finished'][0]): void {
    const run = this.runs.get(msg.msg_id)?.[0];
    if (!run || ms === null) return;
    const attributes: Api.Attributes = { 'rq.outcome': outcomeName(outcome, msg) };
    if (code !== null) attributes['rq.exit_code'] = code;
    if (signal !== null) attributes['rq.exit_signal'] = signal;
    if (outcome.failure) attributes['rq.failure'] = outcome.failure;
    if (usage) {
      attributes['rq.cpu_ms'] = usage.cpu_user_ms + usage.cpu_system_ms;
      if (usage.memory_peak_bytes !== undefined) attributes['rq.memory_peak_bytes'] = usage.memory_peak_bytes;
    }
    if (run.farId !== undefined && outcome.state === 'relayed') attributes['rq.relay.far_msg_id'] = run.farId;
    // A hop that did not deliver failed, whatever the relay does next; a run failed when it ends in err or is retried.
    const failed = run.relay ? outcome.state !== 'relayed' : outcome.state === 'err' || outcome.failure !== undefined;
    this.end(msg.msg_id, attributes, failed ? (outcome.statusText ?? (run.status || outcome.failure) ?? outcome.state) : null, run.startMs + ms);
  }

  /** Ends the span of the message's oldest open run (the one whose end is told first) with these attributes; `error`, a failure's status text. */
  private end(id: string, attributes: Api.Attributes, error: string | null = null, at = this.d.now()): void {
    const run = this.forget(id, 'oldest');
    if (!run) return;
    run.span.setAttributes(attributes);
    if (error !== null) run.span.setStatus({ code: this.d.tracing.api.SpanStatusCode.ERROR, message: error.slice(0, MAX_STATUS_TEXT) });
    run.span.end(at);
  }

  /** At the queue's stop, after its runs have ended: what is pending goes out. */
  async close(): Promise<void> {
    this.runs.clear();
    await this.d.tracing.close();
  }
}
