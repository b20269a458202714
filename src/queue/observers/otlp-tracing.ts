// The OpenTelemetry SDK as a queue process uses it: loaded only when spans are exported, spans batched to an OTLP/HTTP receiver, a failing receiver told of once.
import type * as Api from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Logger } from 'pino';
import type { SpanTarget } from '../../config/otlp-endpoint.js';
import { RQ_VERSION } from '../../version.js';

export interface Tracing {
  /** @opentelemetry/api, loaded with the SDK: its values (SpanKind, trace) are needed at run time too. */
  api: typeof Api;
  tracer: Api.Tracer;
  /** Exports what is pending and stops; waits CLOSE_GRACE_MS at most, so a dead receiver cannot hold up a queue's stop. */
  close(): Promise<void>;
}

/** How long a stop waits for the last spans to be sent. */
const CLOSE_GRACE_MS = 2000;
/** ExportResultCode.SUCCESS of @opentelemetry/core, which is the SDK's own dependency, not rq's. */
const EXPORT_SUCCESS = 0;

/**
 * The exporter with one warn when exports start failing and one info when they succeed again: a
 * receiver that is down for an hour is one line, not one per batch. The SDK drops a failed batch
 * (after its own retries within the export timeout); nothing of it reaches a run.
 */
function toldOnce(exporter: SpanExporter, url: string, log: Logger): SpanExporter {
  let failing = false;
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        if (result.code !== EXPORT_SUCCESS && !failing) {
          failing = true;
          log.warn({ url, err: result.error?.message }, 'spans not exported: the OTLP receiver did not take them; dropping spans until it does');
        } else if (result.code === EXPORT_SUCCESS && failing) {
          failing = false;
          log.info({ url }, 'spans exported again: the OTLP receiver takes them');
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

/**
 * Loads the SDK and starts a tracer exporting to `url`. The packages are imported here and only
 * here, when an endpoint is configured: a queue without one never loads them (an idle queue
 * process's memory is a goal, docs/performance.md), and the daemon bundle leaves them out
 * (tools/bundle-daemons.mjs). The sampler, batch sizes, export timeout, headers and resource
 * attributes follow the SDK's OTEL_* variables.
 */
async function startTracing(url: string, log: Logger): Promise<Tracing> {
  const [api, sdk, otlp, resources] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': 'rq', 'service.version': RQ_VERSION }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const exporter = toldOnce(new otlp.OTLPTraceExporter({ url }), url, log);
  const provider = new sdk.BasicTracerProvider({ resource, spanProcessors: [new sdk.BatchSpanProcessor(exporter)] });
  return {
    api,
    tracer: provider.getTracer('rq', RQ_VERSION),
    async close() {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), CLOSE_GRACE_MS)));
      // A failed export was told of already (toldOnce): the stop goes on either way.
      const over = () => 'over' as const;
      const ended = await Promise.race([provider.shutdown().then(over, over), late]);
      clearTimeout(timer);
      if (ended === 'late') log.warn({ url, grace_ms: CLOSE_GRACE_MS }, 'spans not all exported before the queue stopped: the rest are dropped');
    },
  };
}

/** The SDK started when spans go somewhere; a queue whose SDK cannot load runs all the same, without spans. */
export async function tracingFor(target: SpanTarget, log: Logger): Promise<Tracing | undefined> {
  if (target.url === null) {
    if (target.problem) log.warn(`${target.problem}; no spans exported`);
    return undefined;
  }
  try {
    const tracing = await startTracing(target.url, log);
    log.info({ url: target.url, from: target.from }, 'exporting spans of traced messages');
    return tracing;
  } catch (err) {
    log.warn({ url: target.url, err: (err as Error).message }, 'OpenTelemetry SDK not loaded; no spans exported');
    return undefined;
  }
}
