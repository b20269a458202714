// Requests node's parser refuses, and an HTTP/1.1 request without Host: each answered in rq's plain-text refusal naming what was wrong, over a raw socket against a real web.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type WebRoot, rawExchange, startWebRoot } from './web-root.js';

let w: WebRoot;
beforeAll(async () => {
  w = await startWebRoot({});
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

/** Status line, the headers asked for, and the body of a raw answer. */
function parsed(answer: string, ...names: string[]): { status: string; headers: Record<string, string | undefined>; body: string } {
  const [head, body = ''] = answer.split('\r\n\r\n');
  const lines = head.split('\r\n');
  const header = (n: string) => lines.find((l) => l.toLowerCase().startsWith(`${n.toLowerCase()}:`))?.replace(/^[^:]+:\s*/, '');
  return { status: lines[0], headers: Object.fromEntries(names.map((n) => [n, header(n)])), body };
}

describe('refusals before any route', () => {
  it('an HTTP/1.1 request without Host is 400 naming Host; HTTP/1.0 without one is served', async () => {
    const r = parsed(await rawExchange(w.port, 'GET /q.txt HTTP/1.1\r\nConnection: close\r\n\r\n'), 'content-type', 'x-content-type-options');
    expect(r).toEqual({
      status: 'HTTP/1.1 400 Bad Request',
      headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' },
      body: '400 - Host: expected one header (HTTP/1.1 requires it), received none',
    });
    expect(parsed(await rawExchange(w.port, 'GET /q.txt HTTP/1.0\r\n\r\n')).status).toMatch(/^HTTP\/1\.[01] 200 OK$/);
  });

  it('headers past the limit of node are 431 naming the limit; Content-Length with Transfer-Encoding, or no HTTP at all, is 400 with the reason of the parser', async () => {
    const big = parsed(await rawExchange(w.port, `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`), 'content-type');
    expect(big).toEqual({
      status: 'HTTP/1.1 431 Request Header Fields Too Large',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: '431 - request head: expected at most 16384 bytes of request line and headers, received more',
    });
    const both = parsed(
      await rawExchange(w.port, 'POST /q/test/new_message HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'),
    );
    expect([both.status, both.body]).toEqual([
      'HTTP/1.1 400 Bad Request',
      "400 - request: expected a well-formed HTTP/1.1 request, received one that does not parse: Transfer-Encoding can't be present with Content-Length (HPE_INVALID_TRANSFER_ENCODING)",
    ]);
    const junk = parsed(await rawExchange(w.port, 'NOT HTTP AT ALL\r\n\r\n'));
    expect([junk.status, junk.body]).toEqual([
      'HTTP/1.1 400 Bad Request',
      '400 - request: expected a well-formed HTTP/1.1 request, received one that does not parse: Invalid method encountered (HPE_INVALID_METHOD)',
    ]);
  });
});
