// The socket server's connections over their life: idle ends, half-closes, backpressure, one request at a time, peers that vanish, close().
import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeFrame } from '../../src/ipc/framing.js';
import { request } from '../../src/ipc/socket-client.js';
import { latch, rawClient, sleep, socketPlace } from './helpers.js';
import { waitFor } from '../helpers/rq-root.js';

const place = socketPlace();
const serve = place.serve;

describe('connections', () => {
  it('close() waits for in-flight handlers, answers them, then stops accepting', async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let finished = false;
    const server = await serve(async (p) => {
      started();
      await gate;
      finished = true;
      return `done ${p}`;
    });
    const idle = net.createConnection(place.sock);
    await new Promise((r) => idle.once('connect', r));
    const idleClosed = new Promise((r) => idle.once('close', r));
    const reply = request(place.sock, 'rq1', 'slow');
    await running;
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    // close() ends idle connections at once; the busy one must outlive it until its handler answers.
    await idleClosed;
    expect(closed).toBe(false);
    release();
    await closing;
    expect(finished).toBe(true);
    expect(await reply).toBe('done slow');
    expect(server.connections()).toBe(0);
    await expect(fsp.lstat(place.sock)).rejects.toThrow(/ENOENT/);
    await expect(request(place.sock, 'rq1', 'again', { timeoutMs: 500 })).rejects.toThrow(/ENOENT/);
  });

  it('closes idle connections after idleMs', async () => {
    const server = await serve(() => 'ok', { idleMs: 100 });
    const t0 = Date.now();
    const c = net.createConnection(place.sock);
    const cut = new Promise((r) => c.once('close', r));
    await new Promise((r) => c.once('connect', r));
    await waitFor(() => server.connections() === 1, 'the server to count the connection');
    await cut;
    // The feature under test is a timeout, so elapsed time is the observable. libuv counts from
    // the loop's cached clock, which may lag by a few ms, hence the slack below idleMs.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(50);
    await waitFor(() => server.connections() === 0, 'the server to forget the connection');
  });

  it('does not cut off a handler that runs longer than idleMs', async () => {
    // A real wait: the handler has to outlast the idle timeout it must not be cut off by.
    await serve(
      async () => {
        await sleep(300);
        return 'late';
      },
      { idleMs: 100 },
    );
    expect(await request(place.sock, 'rq1', 'x', { timeoutMs: 2000 })).toBe('late');
  });

  it('still replies to a client that half-closes after sending', async () => {
    await serve((p) => `re ${p}`);
    const got = await new Promise<string>((resolve, reject) => {
      const c = net.createConnection(place.sock);
      let buf = '';
      c.on('data', (d) => (buf += d));
      c.on('end', () => resolve(buf));
      c.on('error', reject);
      c.end(Buffer.concat([encodeFrame('rq1', 'one'), encodeFrame('rq1', 'two')]));
    });
    expect(got).toBe('rq1 00000006 re onerq1 00000006 re two');
  });

  it('answers a request cut short by the end of the connection, a header without its payload included', async () => {
    await serve((p) => `re ${p}`);
    const reply = (bytes: string) =>
      new Promise<string>((resolve, reject) => {
        const c = net.createConnection(place.sock);
        let buf = '';
        c.on('data', (d) => (buf += d));
        c.on('end', () => resolve(buf));
        c.on('error', reject);
        c.end(bytes);
      });
    for (const cut of ['rq1 00000100 ', 'rq1 00000100 x', 'rq1 000']) {
      const got = await reply(cut);
      expect(got, cut).toMatch(/^rq1 \d{8} \["fail","protocol error: connection ended inside a frame \(\d+ bytes pending\)"\]$/);
    }
  });

  it('close() answers what it received, ignores what arrives later, and ends a connection its client keeps open', async () => {
    const running = latch();
    const gate = latch();
    const seen: string[] = [];
    // An idle timeout far beyond the test's: only close() may end the connection.
    const server = await serve(
      async (p) => {
        seen.push(p);
        if (p === 'first') {
          running.open();
          await gate.promise;
        }
        return `re ${p}`;
      },
      { idleMs: 60_000 },
    );
    const c = await rawClient(place.sock, { allowHalfOpen: true });
    place.defer(() => c.socket.destroy());
    c.send('first');
    await running.promise;
    const closing = server.close();
    c.send('late');
    // A round trip through another server: 'late' reached this one before it.
    const other = path.join(place.dir, 'other.sock');
    await serve(() => 'marker', { at: other });
    expect(await request(other, 'rq1', 'x')).toBe('marker');
    gate.open();
    await closing;
    await c.ended;
    expect(c.replies).toEqual(['re first']);
    expect(seen).toEqual(['first']);
  });

  it('closes a connection that falls idle after it was answered', async () => {
    await serve((p) => `re ${p}`, { idleMs: 100 });
    const c = await rawClient(place.sock);
    c.send('a');
    expect(await c.replied(1)).toEqual(['re a']);
    await c.closed;
  });

  it('lets go of a client that never closes its side once it has ended the connection', async () => {
    const server = await serve(() => 'ok', { idleMs: 100 });
    const c = await rawClient(place.sock, { allowHalfOpen: true });
    place.defer(() => c.socket.destroy());
    await c.ended;
    await waitFor(() => server.connections() === 0, 'the server to drop the half-open connection');
  });

  it('answers the one request of a client that half-closes while its handler runs', async () => {
    const running = latch();
    const gate = latch();
    await serve(async (p) => {
      if (p === 'marker') return p;
      running.open();
      await gate.promise;
      return `re ${p}`;
    });
    const c = await rawClient(place.sock, { allowHalfOpen: true });
    c.socket.end(encodeFrame('rq1', 'one'));
    await running.promise;
    // A round trip on another connection: the client's end of stream reached the server before it.
    expect(await request(place.sock, 'rq1', 'marker')).toBe('marker');
    gate.open();
    await c.ended;
    expect(c.replies).toEqual(['re one']);
  });

  it("takes a connection's requests one at a time: one that arrives while another is handled waits for it", async () => {
    const running = latch();
    const gate = latch();
    const seen: string[] = [];
    await serve(async (p) => {
      seen.push(p);
      if (p === 'first') {
        running.open();
        await gate.promise;
      }
      return `re ${p}`;
    });
    const c = await rawClient(place.sock);
    place.defer(() => c.socket.destroy());
    c.send('first');
    await running.promise;
    c.send('second');
    // A round trip on another connection: 'second' reached the server before it.
    expect(await request(place.sock, 'rq1', 'marker')).toBe('re marker');
    expect(seen).toEqual(['first', 'marker']);
    gate.open();
    expect(await c.replied(2)).toEqual(['re first', 're second']);
  });

  it('stops answering a client that does not read its replies, and drops it once idleMs passes without progress', async () => {
    let calls = 0;
    const big = 'x'.repeat(1 << 20);
    const server = await serve(
      () => {
        calls++;
        return big;
      },
      { idleMs: 200 },
    );
    // No data listener: the client never reads, so the replies pile up in the socket.
    const c = net.createConnection(place.sock);
    place.defer(() => c.destroy());
    c.write(Buffer.concat(Array.from({ length: 20 }, (_, i) => encodeFrame('rq1', `r${i}`))));
    await waitFor(() => calls > 0 && server.connections() === 0, 'the server to drop the client that does not read');
    expect(calls).toBeLessThan(20);
  });

  it('waits for a slow reader reply by reply without piling up listeners on its connection', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => void warnings.push(w);
    process.on('warning', onWarning);
    place.defer(() => process.off('warning', onWarning));
    // Each 1 MiB reply is over the socket's buffer, so every one of them waits for the client to read.
    const big = 'x'.repeat(1 << 20);
    await serve(() => big);
    const c = await rawClient(place.sock);
    place.defer(() => c.socket.destroy());
    for (let i = 0; i < 15; i++) c.send(`r${i}`);
    expect((await c.replied(15)).every((r) => r === big)).toBe(true);
    // A warning is emitted on the next tick: a round trip on another connection comes after it.
    expect(await request(place.sock, 'rq1', 'marker')).toBe(big);
    expect(warnings.map((w) => w.name)).toEqual([]);
  });

  it('keeps serving when a client resets its connection', async () => {
    const big = 'x'.repeat(1 << 20);
    await serve((p) => (p === 'x' ? big : `re ${p}`));
    // No data listener: node buffers a little of the 1 MiB reply, the rest stays unread in the
    // socket, so closing it resets the connection and the server's side fails with an error.
    const c = net.createConnection(place.sock);
    await new Promise((r) => c.once('connect', r));
    c.write(encodeFrame('rq1', 'x'));
    // A round trip on another connection: the reply to 'x' was under way before it.
    expect(await request(place.sock, 'rq1', 'marker')).toBe('re marker');
    c.destroy();
    expect(await request(place.sock, 'rq1', 'after')).toBe('re after');
  });
});
