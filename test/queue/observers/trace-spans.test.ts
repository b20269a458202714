// Spans over OTLP/HTTP from a real queue process to a local receiver: the wait and the run of a traced message under its traceparent, their attributes, a failure's ERROR, a relay hop; nothing without an endpoint; a dead receiver costs no run.
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TP = `00-${TRACE_ID}-${PARENT_ID}-01`;
const TS = 'congo=t61rcWkgMzE';
/** OTLP's SpanKind and status code. */
const KIND = { internal: 1, producer: 4, consumer: 5 };
const ERROR = 2;

/** No OTEL_* of the test's own environment reaches the queue; batches leave 20 ms after their first span. */
const ENV = { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '', OTEL_SDK_DISABLED: '', OTEL_BSP_SCHEDULE_DELAY: '20' };

let cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

async function receiver(): Promise<OtlpReceiver> {
  const r = await OtlpReceiver.start();
  cleanups.push(() => r.close());
  return r;
}

/** A root whose config.json has `extra`, and a queue `name` of the bash verbs, started. */
async function queueWith(extra: Record<string, unknown>, name = 'traced', env: NodeJS.ProcessEnv = {}): Promise<{ t: TestRoot; q: QueueProc }> {
  const t = await makeRoot();
  cleanups.push(() => t.cleanup());
  const file = path.join(t.root, 'config', 'config.json');
  await fs.writeFile(file, JSON.stringify({ ...JSON.parse(await fs.readFile(file, 'utf8')), ...extra }));
  await addQueue(t.root, name);
  const q = await QueueProc.start(t.root, name, { env: { ...ENV, ...env } });
  cleanups.push(() => q.stop());
  return { t, q };
}

/** The TRACEPARENT= and TRACESTATE= lines the `env` verb printed. */
async function scriptTrace(t: TestRoot, msg: { path: string }): Promise<string[]> {
  const log = await fs.readFile(path.join(t.root, msg.path, 'job', 'stdio.log'), 'utf8');
  return log.split('\n').filter((l) => /^TRACE(PARENT|STATE)=/.test(l));
}

const named = (spans: ReceivedSpan[], prefix: string) => spans.find((s) => s.name.startsWith(prefix));

describe('with otlp_endpoint', () => {
  it("a traced message's wait and run are spans under its traceparent, with its attributes, and its script's TRACEPARENT is the run span", async () => {
    const r = await receiver();
    const { t, q } = await queueWith({ otlp_endpoint: r.endpoint });
    const id = await q.send({ param1: 'env', traceparent: TP, tracestate: TS });
    const msg = await q.waitState(id, ['done']);
    await r.until(() => r.of(id).length === 2, 'the wait and run spans');

    const wait = named(r.of(id), 'wait ')!;
    const run = named(r.of(id), 'run ')!;
    const full = `http://127.0.0.1:${t.port}/q/traced/${id}`;
    expect(wait).toMatchObject({ name: 'wait traced', kind: KIND.internal, traceId: TRACE_ID, parentSpanId: PARENT_ID, status: { code: 0 } });
    expect(wait.attributes).toEqual({ 'rq.queue': 'traced', 'rq.msg_id': full, 'rq.attempt': 1 });
    expect(run).toMatchObject({ name: 'run traced', kind: KIND.consumer, traceId: TRACE_ID, parentSpanId: PARENT_ID, status: { code: 0 } });
    expect(run.attributes).toMatchObject({ 'rq.queue': 'traced', 'rq.msg_id': full, 'rq.attempt': 1, 'rq.outcome': 'done', 'rq.exit_code': 0 });
    expect(run.attributes['rq.cpu_ms']).toBeGreaterThanOrEqual(0);
    // A script smaller than the queue process has no peak memory to tell without a cgroup (run-usage.ts): no attribute, not a wrong one.
    expect(run.attributes).not.toHaveProperty('rq.memory_peak_bytes');
    // The wait ends where the run begins; the run lasts as long as the queue says it did.
    expect(wait.endMs).toBe(run.startMs);
    expect(wait.startMs).toBeLessThanOrEqual(wait.endMs);
    expect(run.endMs).toBeGreaterThanOrEqual(run.startMs);
    expect(run.resource['service.name']).toBe('rq');
    expect(r.contentTypes).toEqual(new Set(['application/json']));
    expect(await scriptTrace(t, msg)).toEqual([`TRACEPARENT=00-${TRACE_ID}-${run.spanId}-01`, `TRACESTATE=${TS}`]);
    expect(msg.traceparent).toBe(TP);
  });

  it('a failed run is an ERROR span with its status text and failure; an untraced or unsampled message has no spans', async () => {
    const r = await receiver();
    const { t, q } = await queueWith({ otlp_endpoint: r.endpoint });
    const untraced = await q.send({ param1: 'env' });
    await q.waitState(untraced, ['done']);
    const unsampled = `00-${TRACE_ID}-${PARENT_ID}-00`;
    const notSampled = await q.send({ param1: 'env', traceparent: unsampled });
    expect(await scriptTrace(t, await q.waitState(notSampled, ['done']))).toEqual([`TRACEPARENT=${unsampled}`]);
    const id = await q.send({ param1: 'err', traceparent: TP });
    await q.waitState(id, ['err']);
    await r.until(() => r.of(id).length === 2, 'the failed run');
    const run = named(r.of(id), 'run ')!;
    expect(run.status).toEqual({ code: ERROR, message: 'by design' });
    expect(run.attributes).toMatchObject({ 'rq.outcome': 'err', 'rq.failure': 'err', 'rq.exit_code': 0 });
    expect(named(r.of(id), 'wait ')!.status.code).toBe(0);
    await q.stop();
    expect(r.of(untraced)).toEqual([]);
    expect(r.of(notSampled)).toEqual([]);
  });

  it('a relay hop is a producer span naming the far host and the copy it made', async () => {
    const r = await receiver();
    const { q } = await queueWith({ otlp_endpoint: r.endpoint }, 'relay');
    const far = 'http://127.0.0.1:1/q/far/20260101.000000.000-1';
    const id = await q.send({ dest: 'http://127.0.0.1:1/q/far', param1: 'relayed', param2: far, traceparent: TP });
    await q.waitState(id, ['relayed']);
    await r.until(() => r.of(id).length === 2, 'the hop');
    const hop = named(r.of(id), 'relay ')!;
    expect(hop).toMatchObject({ name: 'relay 127.0.0.1:1', kind: KIND.producer, parentSpanId: PARENT_ID, status: { code: 0 } });
    expect(hop.attributes).toMatchObject({
      'rq.queue': 'relay',
      'rq.outcome': 'relayed',
      'rq.relay.dest': 'http://127.0.0.1:1/q/far',
      'rq.relay.far_msg_id': far,
    });
  });

  it('spans still in the batch are sent when the queue stops', async () => {
    const r = await receiver();
    const { q } = await queueWith({ otlp_endpoint: r.endpoint }, 'traced', { OTEL_BSP_SCHEDULE_DELAY: '600000' });
    const id = await q.send({ param1: 'done', traceparent: TP });
    await q.waitState(id, ['done']);
    expect(r.posts).toBe(0);
    await q.stop();
    expect(
      r
        .of(id)
        .map((s) => s.name)
        .sort(),
    ).toEqual(['run traced', 'wait traced']);
  });

  it('a receiver that refuses is warned of once, and once more as taking spans again', async () => {
    const r = await receiver();
    r.answer = 400;
    const { t, q } = await queueWith({ otlp_endpoint: r.endpoint });
    for (let i = 1; i <= 3; i++) {
      await q.waitState(await q.send({ param1: 'done', traceparent: TP }), ['done']);
      await r.until(() => r.posts >= i, `refused export ${i}`);
    }
    r.answer = 200;
    const id = await q.send({ param1: 'done', traceparent: TP });
    await r.until(() => r.of(id).length === 2, 'the spans taken again');
    await q.stop();
    const log = await fs.readFile(path.join(t.root, 'log', 'queue-traced.log'), 'utf8');
    expect(log.match(/spans not exported/g)).toHaveLength(1);
    expect(log.match(/spans exported again/g)).toHaveLength(1);
  });
});

describe('a dead receiver', () => {
  it('holds up no run, and the stop waits for it only its grace', async () => {
    // Takes connections and never answers: every export waits for its timeout (30 s here).
    const held: net.Socket[] = [];
    const blackhole = net.createServer((s) => held.push(s));
    await new Promise<void>((r) => blackhole.listen(0, '127.0.0.1', r));
    cleanups.push(async () => {
      for (const s of held) s.destroy();
      await new Promise((r) => blackhole.close(r));
    });
    const endpoint = `http://127.0.0.1:${(blackhole.address() as net.AddressInfo).port}`;
    const { t, q } = await queueWith({ otlp_endpoint: endpoint }, 'traced', { OTEL_EXPORTER_OTLP_TIMEOUT: '30000' });
    for (let i = 0; i < 5; i++) await q.waitState(await q.send({ param1: 'done', traceparent: TP }), ['done'], 5000);
    await waitFor(() => held.length > 0, 'an export to reach the dead receiver');
    const t0 = Date.now();
    await q.stop();
    expect(Date.now() - t0).toBeLessThan(6000);
    const log = await fs.readFile(path.join(t.root, 'log', 'queue-traced.log'), 'utf8');
    expect(log).toContain('spans not all exported before the queue stopped');
  });
});

describe('the OTEL_* variables', () => {
  it('name the receiver when config.json has no otlp_endpoint, and otlp_endpoint false overrides them', async () => {
    const r = await receiver();
    const { q } = await queueWith({}, 'traced', { OTEL_EXPORTER_OTLP_ENDPOINT: r.endpoint });
    const id = await q.send({ param1: 'done', traceparent: TP });
    await r.until(() => r.of(id).length === 2, 'the spans sent where the variable says');
    const off = await queueWith({ otlp_endpoint: false }, 'traced', { OTEL_EXPORTER_OTLP_ENDPOINT: r.endpoint });
    const none = await off.q.send({ param1: 'done', traceparent: TP });
    await off.q.waitState(none, ['done']);
    await off.q.stop();
    expect(r.of(none)).toEqual([]);
  });
});

describe('without an endpoint', () => {
  it('exports nothing, and the script continues the message trace itself', async () => {
    const r = await receiver();
    // The receiver listens; only the config does not name it.
    const { t, q } = await queueWith({});
    const id = await q.send({ param1: 'env', traceparent: TP, tracestate: TS });
    const msg = await q.waitState(id, ['done']);
    await q.stop();
    expect(r.posts).toBe(0);
    expect(await scriptTrace(t, msg)).toEqual([`TRACEPARENT=${TP}`, `TRACESTATE=${TS}`]);
    const log = await fs.readFile(path.join(t.root, 'log', 'queue-traced.log'), 'utf8');
    expect(log).not.toContain('exporting spans');
  });
});
