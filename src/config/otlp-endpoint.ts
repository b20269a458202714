// Where a queue process sends its spans: the root's `otlp_endpoint`, else the standard OTEL_EXPORTER_OTLP_* variables; nowhere by default.

const OTLP_URL_EXPECTED = 'the http(s) URL of an OTLP/HTTP receiver, such as "http://127.0.0.1:4318"';
export const OTLP_ENDPOINT_EXPECTED = `${OTLP_URL_EXPECTED}, or false`;

/** An OTLP base URL: http or https, with a host. */
export function isOtlpEndpoint(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  try {
    const url = new URL(v);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** The URL spans are posted to, and which setting named it; `problem` when a variable holds no URL (nothing is exported then). */
export type SpanTarget = { url: string; from: string } | { url: null; problem?: string };

/** `<endpoint>/v1/traces`, as OTLP/HTTP defines the traces path below a base endpoint. */
function tracesUrl(base: string): string {
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * The root's config file decides when it has `otlp_endpoint` (a URL, or false for none): it is
 * rq's own setting, one per root, while the OTEL_* variables of the daemon's environment may be
 * there for the scripts, which inherit them. Without it, the variables as OpenTelemetry's SDKs
 * read them: OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn tracing off,
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the whole URL, OTEL_EXPORTER_OTLP_ENDPOINT a base below
 * which `/v1/traces` is added. A variable that holds no URL exports nothing: a typo costs the
 * spans, never the queue's runs.
 */
export function spanTarget(cfg: { otlp_endpoint?: string | false }, env: NodeJS.ProcessEnv): SpanTarget {
  if (cfg.otlp_endpoint === false) return { url: null };
  if (cfg.otlp_endpoint !== undefined) return { url: tracesUrl(cfg.otlp_endpoint), from: 'otlp_endpoint in config/config.json' };
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return { url: null };
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'] as const) {
    const v = env[name]?.trim();
    if (!v) continue;
    if (!isOtlpEndpoint(v)) return { url: null, problem: `${name}: expected ${OTLP_URL_EXPECTED}, received ${JSON.stringify(v)}` };
    return { url: name === 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' ? v : tracesUrl(v), from: name };
  }
  return { url: null };
}
