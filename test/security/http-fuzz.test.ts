// Property: whatever arrives over HTTP (method, path, headers, body, multipart parts, nesting), the web
// answers below 500, in time, and a refused request creates no message; the daemons stay up.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, send, startWebRoot } from '../web/web-root.js';
import { fillRoute, routeTable } from '../web/route-table.js';
import { FUZZ_SEED, fuzzRuns, messageIds, rawRequest, shortReport, supervisedPids } from './fuzz-helpers.js';

let w: WebRoot;
let patterns: string[];
let done: string;

beforeAll(async () => {
  w = await startWebRoot({ config: { allow_new_queue: true } });
  done = await send(w.base, 'test', { param1: 'done' });
  // Restart succeeds on any request that names the queue (it takes no parameters), and a new pid is its point.
  patterns = [...new Set((await routeTable(w.root)).map((r) => r.pattern))].filter((p) => !p.endsWith('/restart'));
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const text = fc.string({ unit: 'binary', maxLength: 40 });
const segment = fc.oneof(
  fc.constantFrom('test', 'nope', '..', '%2e%2e', '%zz', '%00', 'stdio.log', 'a%2Fb', ''),
  text.map((s) => encodeURIComponent(s)),
);
/** A form or query key: plain, bracketed, or nested deeper than any limit. */
const key = fc.oneof(
  fc.constantFrom(
    'mesg',
    'mesg[dest]',
    'mesg[param1]',
    'queue[name]',
    'queue[script]',
    'x_format',
    '_method',
    'back',
    'filter',
    'limit',
    'idempotency_key',
    'depends',
    'depends[]',
    'all',
    'key',
    'mesg[depends]',
    'mesg[limit]',
  ),
  fc.integer({ min: 1, max: 3000 }).map((n) => `a${'[b]'.repeat(n)}`),
  fc.integer({ min: 1, max: 50 }).map((n) => `mesg${'[]'.repeat(n)}`),
  text,
);
const value = fc.oneof(
  text,
  fc.constantFrom('json', 'html', 'commit', 'prep', 'delete', '{"dest":"test"}', '%', '%E0%A4%A'),
  fc.integer({ min: 0, max: 300_000 }).map((n) => 'x'.repeat(n)),
);
const pairs = fc.array(fc.tuple(key, value), { maxLength: 6 });
/** Within the 16 KiB of a request head (beyond it Node answers 431 before rq sees anything). */
const queryPairs = fc.array(fc.tuple(key, value), { maxLength: 6 }).filter((kv) => kv.reduce((n, [k, v]) => n + k.length + v.length, 0) < 4000);
/** Raw keeps `%`, `[`, `]` and `&` as typed (malformed escapes included); only what HTTP cannot carry is escaped. */
const rawEscape = (s: string) => s.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
const encoded = (kv: [string, string][], raw: boolean) =>
  kv.map(([k, v]) => (raw ? `${rawEscape(k)}=${rawEscape(v)}` : `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)).join('&');

interface Body {
  type?: string;
  body?: Buffer;
}
const BOUNDARY = 'fuzzBoundary7MA4YWxk';
const part = fc.record({
  name: key,
  filename: fc.option(fc.oneof(text, fc.constantFrom('../etc/passwd', 'a/b.txt', 'C:\\x.txt', '.', '')), { nil: undefined }),
  data: value,
});
const body: fc.Arbitrary<Body> = fc.oneof(
  fc.constant({}),
  fc.tuple(pairs, fc.boolean()).map(([kv, raw]) => ({ type: 'application/x-www-form-urlencoded', body: Buffer.from(encoded(kv, raw)) })),
  fc.jsonValue({ maxDepth: 4 }).map((v) => ({ type: 'application/json', body: Buffer.from(JSON.stringify(v) ?? 'null') })),
  fc.integer({ min: 1, max: 20_000 }).map((n) => ({ type: 'application/json', body: Buffer.from(`{"mesg":${'['.repeat(n)}${']'.repeat(n)}}`) })),
  fc.tuple(fc.array(part, { maxLength: 4 }), fc.boolean()).map(([parts, cut]) => {
    const text =
      parts
        .map(
          (p) =>
            `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}\r\n\r\n${p.data}\r\n`,
        )
        .join('') + `--${BOUNDARY}--\r\n`;
    return { type: `multipart/form-data; boundary=${BOUNDARY}`, body: Buffer.from(cut ? text.slice(0, Math.floor(text.length / 2)) : text) };
  }),
  fc
    .tuple(
      fc.constantFrom('multipart/form-data', 'multipart/form-data; boundary=', 'application/json; charset=bogus', 'text/plain', 'x/y; a="', ''),
      fc.uint8Array({ maxLength: 200 }),
    )
    .map(([type, bytes]) => ({ type, body: Buffer.from(bytes) })),
);

const request = fc.record({
  method: fc.constantFrom('GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
  pattern: fc.nat(),
  segments: fc.array(segment, { minLength: 4, maxLength: 4 }),
  query: fc.option(fc.tuple(queryPairs, fc.boolean()), { nil: undefined }),
  body,
  host: fc.option(fc.constantFrom('evil.example', 'localhost', '[::1]', '127.0.0.1:1', 'a b'), { nil: undefined, freq: 5 }),
});

describe('HTTP fuzz', () => {
  it('never a 5xx, never a hang, never a message from a refused request', async () => {
    const pids = await supervisedPids(w.root);
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const pattern = patterns[r.pattern % patterns.length];
        const [q, id, name, file] = r.segments;
        let p = fillRoute(pattern, { q: q === '' ? 'test' : q, id: id === '' ? done : id, name, file, tag: name });
        if (r.query) p += `?${encoded(...r.query)}`;
        const headers: Record<string, string> = { host: r.host ?? `127.0.0.1:${w.port}` };
        if (r.body.type !== undefined) headers['content-type'] = r.body.type;
        if (r.body.body) headers['content-length'] = String(r.body.body.length);
        const before = await messageIds(w.root, 'test');
        const res = await rawRequest(w.port, r.method, p, headers, r.method === 'GET' || r.method === 'HEAD' ? undefined : r.body.body);
        expect(res.status, `${r.method} ${p.slice(0, 300)}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
        // A failure is never answered as a success.
        if (/^\[\s*("fail"|false)\s*,/.test(res.body))
          expect(res.status, `${r.method} ${p.slice(0, 300)}: ${res.body.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
        if (res.status >= 400 || res.status === 0)
          expect(await messageIds(w.root, 'test'), `${r.method} ${p.slice(0, 300)} answered ${res.status} and created a message`).toEqual(before);
      }),
      { numRuns: fuzzRuns(250), seed: FUZZ_SEED, endOnFailure: true, reporter: shortReport },
    );
    // Still up, and never restarted: rq-mgr, the web and the queue all answer, with the same pids.
    expect((await fetch(`${w.base}/healthz`)).status).toBe(200);
    expect(await supervisedPids(w.root)).toEqual(pids);
  }, 600_000);
});
