// The long-lived socket client (SocketConnection): pipelining, reconnects, and how each request learns why it got no reply.
import fsp from 'node:fs/promises';
import type net from 'node:net';
import { describe, expect, it } from 'vitest';
import { FrameDecoder, FrameError, MAX_FRAME_BYTES, encodeFrame } from '../../src/ipc/framing.js';
import { SocketConnection, mayHaveArrived } from '../../src/ipc/socket-client.js';
import { seededRandom } from '../helpers/seeded-random.mjs';
import { OVER_A_SOCKET_BUFFER, holdLoop, latch, noReplyFrom, resetAfterFirstChunk, sleep, socketPlace } from './helpers.js';

const place = socketPlace('q.sock');

async function open(opts: { timeoutMs?: number } = {}): Promise<SocketConnection> {
  const conn = await SocketConnection.open(place.sock, 'rq1', opts);
  place.defer(() => conn.close());
  return conn;
}

/** A raw server's connection handler: reads requests and, once `n` have arrived, calls `then` with the connection. */
function afterRequests(n: number, then: (c: net.Socket) => void) {
  return (c: net.Socket) => {
    const decoder = new FrameDecoder('rq1');
    let got = 0;
    c.on('data', (d) => {
      got += decoder.push(d).length;
      if (got === n) then(c);
    });
  };
}

describe('SocketConnection', () => {
  it('pipelines many requests on one connection, answered first in first out', async () => {
    // Random handler times, so replies arrive in uneven bursts the client must match up in order.
    const rng = seededRandom();
    const server = await place.serve(async (p) => {
      await sleep(rng.next() * 5);
      return `re ${p}`;
    });
    const conn = await open();
    const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => conn.request(`r${i}`)));
    expect(replies, rng.replay).toEqual(Array.from({ length: 100 }, (_, i) => `re r${i}`));
    expect(server.connections()).toBe(1);
    expect(conn.inFlight()).toBe(0);
  });

  it('reports a missing server at open; nothing was sent', async () => {
    const err = await noReplyFrom(SocketConnection.open(place.sock, 'rq1'), place.sock);
    expect(err.message).toBe(`no reply from ${place.sock}: ENOENT: no socket file (is the process running?)`);
    expect(mayHaveArrived(err)).toBe(false);
  });

  it('reports an open that timed out before it connected; nothing was sent', async () => {
    await place.rawServer(() => {});
    const opening = SocketConnection.open(place.sock, 'rq1', { timeoutMs: 50 });
    holdLoop(100);
    const err = await noReplyFrom(opening, place.sock);
    expect(err.message).toBe(`no reply from ${place.sock}: timed out after 50 ms connecting`);
    expect(mayHaveArrived(err)).toBe(false);
  });

  it('reconnects after the server restarts', async () => {
    const first = await place.serve(() => 'first');
    const conn = await open();
    expect(await conn.request('a')).toBe('first');
    await first.close();
    // While no server is up, a request fails with the cause...
    await noReplyFrom(conn.request('b'), place.sock);
    await place.serve(() => 'second');
    // ...and once one is back, the next request connects afresh.
    expect(await conn.request('c')).toBe('second');
    expect(await conn.request('d')).toBe('second');
  });

  it('a request that finds the connection lost and cannot make a new one fails as never sent', async () => {
    await place.rawServer(afterRequests(1, (c) => c.end()));
    const conn = await open();
    const lost = await noReplyFrom(conn.request('a'), place.sock);
    expect(lost.message).toBe(`no reply from ${place.sock}: connection closed before a whole reply arrived`);
    // The server still runs, but its socket file is gone: a new connect finds nothing.
    await fsp.rm(place.sock);
    const err = await noReplyFrom(conn.request('b'), place.sock);
    expect(err.message).toBe(`no reply from ${place.sock}: ENOENT: no socket file (is the process running?)`);
    expect(mayHaveArrived(err)).toBe(false);
  });

  it('fails every pending request when the server closes the connection', async () => {
    // The server ends the connection once all three requests have reached it: all are pending.
    await place.rawServer(afterRequests(3, (c) => c.end()));
    const conn = await open();
    const errs = await Promise.all([conn.request('a'), conn.request('b'), conn.request('c')].map((p) => noReplyFrom(p, place.sock)));
    for (const err of errs) expect(err.message).toBe(`no reply from ${place.sock}: connection closed before a whole reply arrived`);
    expect(conn.inFlight()).toBe(0);
  });

  it('says the connection failed when it breaks under a request; the request may have arrived', async () => {
    await place.rawServer(resetAfterFirstChunk);
    const conn = await open();
    const err = await noReplyFrom(conn.request(OVER_A_SOCKET_BUFFER), place.sock);
    expect(err.message).toMatch(new RegExp(`^no reply from ${place.sock}: connection failed: (write EPIPE|read ECONNRESET)$`));
    expect(mayHaveArrived(err)).toBe(true);
  });

  it('times out a request and drops the connection so replies cannot shift', async () => {
    let calls = 0;
    const gate = latch();
    await place.serve(async (p) => {
      calls++;
      // Held until the test ends, long after the client has given up on it.
      if (p === 'slow') await gate.promise;
      return `re ${p}`;
    });
    // Deferred after the server: the handler is let go before the server's close waits for it.
    place.defer(gate.open);
    const conn = await open({ timeoutMs: 100 });
    const [slow, next] = await Promise.allSettled([conn.request('slow'), conn.request('next')]);
    expect((slow as PromiseRejectedResult).reason.message).toBe(`no reply from ${place.sock}: timed out after 100 ms`);
    expect(mayHaveArrived((slow as PromiseRejectedResult).reason)).toBe(true);
    expect((next as PromiseRejectedResult).reason.message).toBe(`no reply from ${place.sock}: connection dropped: another request on it timed out`);
    expect(await conn.request('after')).toBe('re after');
    expect(calls).toBeGreaterThanOrEqual(2);
  });

  it('drops a connection that answers what nobody asked, and asks the next request on a fresh one', async () => {
    let conns = 0;
    const firstGone = latch();
    await place.rawServer((c) => {
      if (++conns === 1) {
        c.on('close', firstGone.open);
        c.write(encodeFrame('rq1', 'unasked'));
      } else c.on('data', () => c.write(encodeFrame('rq1', 'answer')));
    });
    const conn = await open();
    await firstGone.promise;
    expect(await conn.request('a')).toBe('answer');
  });

  it('close() fails the requests still waiting, and every request after it', async () => {
    await place.rawServer(() => {});
    const conn = await open();
    const waiting = conn.request('a');
    conn.close();
    const closedText = `no reply from ${place.sock}: connection was closed by its owner`;
    expect((await noReplyFrom(waiting, place.sock)).message).toBe(closedText);
    expect((await noReplyFrom(conn.request('b'), place.sock)).message).toBe(closedText);
  });

  it('refuses a request too long for the frame without touching the connection', async () => {
    await place.serve((p) => `re ${p}`);
    const conn = await open();
    const err = await conn.request('x'.repeat(MAX_FRAME_BYTES + 1)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FrameError);
    expect(await conn.request('small')).toBe('re small');
  });
});
