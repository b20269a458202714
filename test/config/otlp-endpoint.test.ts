// Where spans go: config.json's otlp_endpoint decides when it is there, else the OTEL_* variables as OpenTelemetry's SDKs read them; nowhere by default.
import { describe, expect, it } from 'vitest';
import { isOtlpEndpoint, spanTarget } from '../../src/config/otlp-endpoint.js';

const BASE = 'OTEL_EXPORTER_OTLP_ENDPOINT';
const TRACES = 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT';

describe('spanTarget', () => {
  it('is nowhere without the key or a variable', () => {
    expect(spanTarget({}, {})).toEqual({ url: null });
    expect(spanTarget({}, { [BASE]: '  ', [TRACES]: '' })).toEqual({ url: null });
  });

  it("posts to the config's endpoint below /v1/traces, whatever the variables say", () => {
    const env = { [BASE]: 'http://env:4318', [TRACES]: 'http://env:4318/v1/traces', OTEL_SDK_DISABLED: 'true' };
    expect(spanTarget({ otlp_endpoint: 'http://127.0.0.1:4318' }, env)).toEqual({
      url: 'http://127.0.0.1:4318/v1/traces',
      from: 'otlp_endpoint in config/config.json',
    });
    expect(spanTarget({ otlp_endpoint: 'https://c.example/otlp/' }, {}).url).toBe('https://c.example/otlp/v1/traces');
    expect(spanTarget({ otlp_endpoint: false }, env)).toEqual({ url: null });
  });

  it('takes the traces variable as the whole URL before the base one, below which /v1/traces is added', () => {
    expect(spanTarget({}, { [BASE]: 'http://base:4318', [TRACES]: 'http://traces:4318/custom' })).toEqual({ url: 'http://traces:4318/custom', from: TRACES });
    expect(spanTarget({}, { [BASE]: 'http://base:4318/' })).toEqual({ url: 'http://base:4318/v1/traces', from: BASE });
  });

  it('is nowhere when the variables turn the SDK or its trace exporter off', () => {
    expect(spanTarget({}, { [BASE]: 'http://base:4318', OTEL_SDK_DISABLED: 'TRUE' })).toEqual({ url: null });
    expect(spanTarget({}, { [BASE]: 'http://base:4318', OTEL_TRACES_EXPORTER: 'none' })).toEqual({ url: null });
    expect(spanTarget({}, { [BASE]: 'http://base:4318', OTEL_SDK_DISABLED: 'false' }).url).toBe('http://base:4318/v1/traces');
  });

  it('exports nothing for a variable that holds no URL, and says which and why', () => {
    expect(spanTarget({}, { [TRACES]: 'collector:4318' })).toEqual({
      url: null,
      problem: `${TRACES}: expected the http(s) URL of an OTLP/HTTP receiver, such as "http://127.0.0.1:4318", received "collector:4318"`,
    });
  });
});

describe('isOtlpEndpoint', () => {
  it('takes http and https URLs with a host only', () => {
    expect(['http://127.0.0.1:4318', 'https://h/x'].map(isOtlpEndpoint)).toEqual([true, true]);
    expect(['', 'h:4318', 'grpc://h:4317', 'file:///tmp/x', 'http://', 3].map(isOtlpEndpoint)).toEqual([false, false, false, false, false, false]);
  });
});
