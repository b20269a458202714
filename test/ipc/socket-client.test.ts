import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { FrameDecoder } from '../../src/ipc/framing.js';
import { MgrClient } from '../../src/ipc/mgr-client.js';
import { SocketConnection, request } from '../../src/ipc/socket-client.js';
import { listenSocket, type SocketServer } from '../../src/ipc/socket-server.js';
import { silentLogger } from '../../src/log.js';
import { sleep, staleSocket, tempDir } from './helpers.js';
import { seededRandom } from '../helpers/seeded-random.mjs';

const log = silentLogger();
let dir: string;
let cleanup: () => Promise<void>;
let sock: string;
const closers: Array<() => Promise<void> | void> = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  sock = path.join(dir, 'q.sock');
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await cleanup();
});

async function serve(handle: (payload: string) => Promise<string> | string): Promise<SocketServer> {
  const server = await listenSocket({ path: sock, proto: 'rq1', handle, log });
  closers.push(() => server.close());
  return server;
}

/** A raw server that does something unhelpful with every connection. */
async function rawServer(onConnection: (c: net.Socket) => void): Promise<void> {
  const conns = new Set<net.Socket>();
  const server = net.createServer((c) => {
    conns.add(c);
    onConnection(c);
  });
  await new Promise<void>((r) => server.listen(sock, r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        // A connection nobody reads from would never see the client's EOF.
        for (const c of conns) c.destroy();
      }),
  );
}

async function noReply(p: Promise<unknown>): Promise<RqError> {
  const err = await p.then(
    () => expect.unreachable('expected a rejection'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RqError);
  expect((err as RqError).code).toBe('RQ_ERR_NO_REPLY');
  expect((err as RqError).message).toContain(sock);
  return err as RqError;
}

describe('request', () => {
  it('sends one frame and returns the one reply', async () => {
    await serve((p) => `re ${p}`);
    expect(await request(sock, 'rq1', 'ping ')).toBe('re ping ');
  });

  it('names the path and ENOENT when there is no socket', async () => {
    const err = await noReply(request(sock, 'rq1', 'ping '));
    expect(err.message).toMatch(/ENOENT/);
  });

  it('names the path and ECONNREFUSED when nothing listens', async () => {
    await staleSocket(sock);
    const err = await noReply(request(sock, 'rq1', 'ping '));
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it('times out when no reply comes', async () => {
    await rawServer(() => {});
    const t0 = Date.now();
    const err = await noReply(request(sock, 'rq1', 'ping ', { timeoutMs: 150 }));
    expect(err.message).toMatch(/timed out after 150 ms/);
    // A timeout feature: elapsed time is what it promises (a little slack for libuv's cached clock).
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('the rq-mgr client keeps to the timeout it was made with, and to one given per call', async () => {
    await rawServer(() => {});
    const err = await noReply(new MgrClient(sock, 150).queues());
    expect(err.message).toMatch(/timed out after 150 ms/);
    const perCall = await noReply(new MgrClient(sock).ping(120));
    expect(perCall.message).toMatch(/timed out after 120 ms/);
  });

  it('rejects when the server closes before a whole reply', async () => {
    await rawServer((c) => c.on('data', () => c.end('rq1 00000010 short')));
    const err = await noReply(request(sock, 'rq1', 'ping '));
    expect(err.message).toMatch(/closed before a whole reply/);
  });

  it('rejects a reply that is not a frame as a protocol error', async () => {
    await rawServer((c) => c.on('data', () => c.end('HTTP/1.1 400 Bad Request\r\n')));
    const err = await request(sock, 'rq1', 'ping ').catch((e: RqError) => e);
    expect(err).toBeInstanceOf(RqError);
    expect((err as RqError).code).toBe('RQ_ERR_PROTOCOL');
  });

  it('receives a 5 MB reply whole', async () => {
    const big = 'x✓'.repeat(1_250_000); // 5 MB of UTF-8
    expect(Buffer.byteLength(big)).toBe(5_000_000);
    await serve(() => big);
    const got = await request(sock, 'rq1', 'messages {}');
    expect(got.length).toBe(big.length);
    expect(got === big).toBe(true);
  });
});

describe('SocketConnection', () => {
  it('pipelines many requests on one connection, answered first in first out', async () => {
    // Random handler times, so replies arrive in uneven bursts the client must match up in order.
    const rng = seededRandom();
    const server = await serve(async (p) => {
      await sleep(rng.next() * 5);
      return `re ${p}`;
    });
    const conn = await SocketConnection.open(sock, 'rq1');
    closers.push(() => conn.close());
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => conn.request(`r${i}`)));
    expect(replies, rng.replay).toEqual(Array.from({ length: 100 }, (_, i) => `re r${i}`));
    expect(server.connections()).toBe(1);
    expect(conn.inFlight()).toBe(0);
  });

  it('reports a missing server at open', async () => {
    const err = await noReply(SocketConnection.open(sock, 'rq1'));
    expect(err.message).toMatch(/ENOENT/);
  });

  it('reconnects after the server restarts', async () => {
    const first = await serve(() => 'first');
    const conn = await SocketConnection.open(sock, 'rq1');
    closers.push(() => conn.close());
    expect(await conn.request('a')).toBe('first');
    await first.close();
    // While no server is up, a request fails with the cause...
    await noReply(conn.request('b'));
    await serve(() => 'second');
    // ...and once one is back, the next request connects afresh.
    expect(await conn.request('c')).toBe('second');
    expect(await conn.request('d')).toBe('second');
  });

  it('fails every pending request when the connection breaks', async () => {
    // The server breaks the connection once all three requests have reached it: all are pending.
    await rawServer((c) => {
      const decoder = new FrameDecoder('rq1');
      let got = 0;
      c.on('data', (d) => {
        got += decoder.push(d).length;
        if (got === 3) c.destroy();
      });
    });
    const conn = await SocketConnection.open(sock, 'rq1');
    closers.push(() => conn.close());
    const errs = await Promise.all([conn.request('a'), conn.request('b'), conn.request('c')].map((p) => noReply(p)));
    expect(errs).toHaveLength(3);
    expect(conn.inFlight()).toBe(0);
  });

  it('times out a request and drops the connection so replies cannot shift', async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    await serve(async (p) => {
      calls++;
      // Held until the test ends, long after the client has given up on it.
      if (p === 'slow') await gate;
      return `re ${p}`;
    });
    // Closers run in reverse: the handler is let go before the server's close waits for it.
    closers.push(release);
    const conn = await SocketConnection.open(sock, 'rq1', { timeoutMs: 100 });
    closers.push(() => conn.close());
    const [slow, next] = await Promise.allSettled([conn.request('slow'), conn.request('next')]);
    expect(slow.status).toBe('rejected');
    expect(String((slow as PromiseRejectedResult).reason.message)).toMatch(/timed out after 100 ms/);
    expect(next.status).toBe('rejected');
    expect(await conn.request('after')).toBe('re after');
    expect(calls).toBeGreaterThanOrEqual(2);
  });

  it('refuses requests after close()', async () => {
    await serve(() => 'x');
    const conn = await SocketConnection.open(sock, 'rq1');
    conn.close();
    await noReply(conn.request('a'));
  });
});
