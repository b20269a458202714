// A local OTLP/HTTP receiver: takes the OpenTelemetry exporter's POSTs to /v1/traces (JSON, as @opentelemetry/exporter-trace-otlp-http sends them) and keeps their spans.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

type AttrValue = string | number | boolean;

/** One span as OTLP/JSON carries it, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 4 producer, 5 consumer. */
  kind: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, AttrValue>;
  /** OTLP's status code: 0 unset, 2 error. */
  status: { code: number; message?: string };
  resource: Record<string, AttrValue>;
}

interface KeyValue {
  key: string;
  value: { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
}

function flat(kvs: KeyValue[] = []): Record<string, AttrValue> {
  const out: Record<string, AttrValue> = {};
  for (const { key, value } of kvs)
    out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue ?? ''));
  return out;
}

/** Nanoseconds since the epoch (a string in OTLP/JSON) as milliseconds. */
const ms = (nanos: string | number) => Number(BigInt(nanos) / 1_000_000n);

/** A receiver on a loopback port the kernel picks (it listens until closed, so nothing else takes the port). */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Every POST to /v1/traces, taken or refused. */
  posts = 0;
  /** How a POST is answered: 200 takes its spans; another status refuses them, and the exporter counts a failed export. */
  answer = 200;
  /** The Content-Type of each POST's body. */
  readonly contentTypes = new Set<string | undefined>();
  private readonly arrived = new EventEmitter();

  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => this.take(req, Buffer.concat(chunks), res));
  });

  static async start(): Promise<OtlpReceiver> {
    const receiver = new OtlpReceiver();
    await new Promise<void>((r) => receiver.server.listen(0, '127.0.0.1', r));
    return receiver;
  }

  /** The base URL to configure, as `otlp_endpoint` or OTEL_EXPORTER_OTLP_ENDPOINT. */
  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private take(req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): void {
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    this.posts++;
    if (this.answer !== 200) {
      res.writeHead(this.answer, { 'content-type': 'application/json' }).end('{}');
      this.arrived.emit('post');
      return;
    }
    this.contentTypes.add(req.headers['content-type']);
    const text = (req.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(body) : body).toString('utf8');
    for (const rs of JSON.parse(text).resourceSpans ?? []) {
      const resource = flat(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          this.spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            startMs: ms(s.startTimeUnixNano),
            endMs: ms(s.endTimeUnixNano),
            attributes: flat(s.attributes),
            status: s.status ?? { code: 0 },
            resource,
          });
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    this.arrived.emit('post');
  }

  /** The spans of one message (by the end of its full id). */
  of(id: string): ReceivedSpan[] {
    return this.spans.filter((s) => String(s.attributes['rq.msg_id']).endsWith(`/${id}`));
  }

  /** Resolves once `done()` holds after a POST (or at once); rejects after `timeoutMs`. */
  until(done: () => boolean, label: string, timeoutMs = 10_000): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.arrived.off('post', check);
        reject(new Error(`timed out waiting for ${label}; received ${this.posts} POSTs, spans ${JSON.stringify(this.spans.map((s) => s.name))}`));
      }, timeoutMs);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        this.arrived.off('post', check);
        resolve();
      };
      this.arrived.on('post', check);
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}
