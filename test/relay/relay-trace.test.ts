// A relayed traced message across two real hosts exporting spans to one OTLP/HTTP receiver: the far host's wait and run nest under the relay hop's span.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERBS_SH } from '../helpers/rq-root.js';
import { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { Host } from './hosts.js';

// Inherited by both rq-mgrs and their queues: batches leave 20 ms after their first span; no OTEL_* of the test's own.
Object.assign(process.env, { OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' });

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT_ID = 'b7ad6b7169203331';

let r: OtlpReceiver;
let A: Host;
let B: Host;

beforeAll(async () => {
  r = await OtlpReceiver.start();
  const config = { otlp_endpoint: r.endpoint };
  [A, B] = await Promise.all([Host.start({ config }), Host.start({ config, queues: { test: { script: VERBS_SH } } })]);
}, 90_000);
afterAll(async () => {
  await Promise.all([A?.stop(), B?.stop()]);
  await r?.close();
});

describe('a traced message relayed to another host', () => {
  it('is one trace: the sender → the relay hop (a producer span) → the far wait and run', async () => {
    const res = await fetch(`${A.base}/q/relay/new_message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
      body: JSON.stringify({ dest: B.url('test'), param1: 'done' }),
    });
    // Bound for another host, the message is made in A's relay queue.
    const [ok, full] = (await res.json()) as [string, string];
    expect(ok, full).toBe('ok');
    const local = await A.waitState('relay', full.split('/').pop()!, ['relayed', 'err']);
    expect(local.state, local.status).toBe('relayed');
    const farFull = String(local.status).replace(/^relayed - /, '');
    const far = await B.waitState('test', farFull.split('/').pop()!, ['done']);

    const spansOf = (fullId: string) => r.spans.filter((s) => s.attributes['rq.msg_id'] === fullId);
    await r.until(() => spansOf(full).length === 2 && spansOf(farFull).length === 2, 'the hop and the far spans');
    const hop = spansOf(full).find((s) => s.name.startsWith('relay '))!;
    expect(hop).toMatchObject({ name: `relay 127.0.0.1:${B.port}`, kind: 4, traceId: TRACE_ID, parentSpanId: PARENT_ID });
    expect(hop.attributes).toMatchObject({ 'rq.queue': 'relay', 'rq.outcome': 'relayed', 'rq.relay.dest': B.url('test'), 'rq.relay.far_msg_id': farFull });
    for (const s of spansOf(farFull)) expect(s, s.name).toMatchObject({ traceId: TRACE_ID, parentSpanId: hop.spanId });
    expect(
      spansOf(farFull)
        .map((s) => s.name)
        .sort(),
    ).toEqual(['run test', 'wait test']);
    // The far copy carries the hop's context: its own tracer (a script's) continues from there too.
    expect(far.traceparent).toBe(`00-${TRACE_ID}-${hop.spanId}-01`);
  });
});
