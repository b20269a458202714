// The feed client against a raw unix socket server: the hello, events split across chunks, bad lines, silence, no server, and close by its owner.
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FeedClient } from '../../src/ipc/feed-client.js';
import type { FeedEvent } from '../../src/ipc/feed-event.js';
import { tempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let sock: string;
let server: net.Server | null = null;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  sock = path.join(dir, 'events.sock');
});
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = null;
  await cleanup();
});

/** A server that hands each connection to `talk`. */
async function serveRaw(talk: (socket: net.Socket) => void): Promise<void> {
  server = net.createServer(talk);
  await new Promise<void>((r) => server!.listen(sock, r));
}

const hello = JSON.stringify({ type: 'hello', queue: 'q', pid: 42, seq: 7, at: 1 });
const ev = (seq: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ seq, at: 2, queue: 'q', type: 'moved', msg_id: '20261121.1643.46.613.2164022', from: 'que', to: 'run', actor: 'dispatcher', ...extra });

function collect() {
  const events: FeedEvent[] = [];
  let onClosed: (why: string) => void = () => undefined;
  const closed = new Promise<string>((r) => (onClosed = r));
  return { events, closed, handlers: { event: (e: FeedEvent) => void events.push(e), closed: (why: string) => onClosed(why) } };
}

describe('FeedClient', () => {
  it('gives the events that arrive with the hello only after the opener has taken the hello', async () => {
    await serveRaw((socket) => socket.write(`${hello}\n${ev(8)}\n${ev(9)}\n`));
    let opened = false;
    const seen: [number, boolean][] = [];
    let done: () => void = () => undefined;
    const both = new Promise<void>((r) => (done = r));
    const handlers = {
      event: (e: FeedEvent) => {
        seen.push([e.seq, opened]);
        if (seen.length === 2) done();
      },
      closed: () => undefined,
    };
    const { client } = await FeedClient.open(sock, handlers);
    opened = true;
    await both;
    expect(seen).toEqual([
      [8, true],
      [9, true],
    ]);
    client.close();
  });

  it('resolves with the hello, then hands over each event, lines and characters split across chunks included', async () => {
    const lines = `${hello}\n${ev(8, { reason: 'café ☕' })}\n${ev(9)}\n`;
    const bytes = Buffer.from(lines);
    await serveRaw((s) => {
      // One byte at a time: every line and the multi-byte characters are cut somewhere.
      let i = 0;
      const drip = () => {
        if (i >= bytes.length) return void s.end();
        s.write(bytes.subarray(i, ++i));
        setImmediate(drip);
      };
      drip();
    });
    const c = collect();
    const { hello: h } = await FeedClient.open(sock, c.handlers);
    expect(h).toEqual(JSON.parse(hello));
    expect(await c.closed).toBe('the queue closed the feed');
    expect(c.events.map((e) => [e.seq, e.reason])).toEqual([
      [8, 'café ☕'],
      [9, undefined],
    ]);
  });

  it('ends on a line that is not a feed line, saying why', async () => {
    await serveRaw((s) => s.write(`${hello}\n${ev(8)}\n{"seq":9}\n${ev(10)}\n`));
    const c = collect();
    await FeedClient.open(sock, c.handlers);
    expect(await c.closed).toMatch(/^protocol error: event feed line lacks queue, seq or at: /);
    expect(c.events.map((e) => e.seq)).toEqual([8]);
  });

  it('refuses a feed that does not begin with a hello, one that says nothing, and a path nobody listens on', async () => {
    await serveRaw((s) => s.write(`${ev(1)}\n`));
    await expect(FeedClient.open(sock, collect().handlers)).rejects.toMatchObject({
      code: 'RQ_ERR_NO_REPLY',
      message: expect.stringMatching(/began with moved, not hello/),
    });
    await new Promise<void>((r) => server!.close(() => r()));
    await serveRaw(() => undefined);
    await expect(FeedClient.open(sock, collect().handlers, { timeoutMs: 200 })).rejects.toMatchObject({
      code: 'RQ_ERR_NO_REPLY',
      message: expect.stringMatching(/no hello within 200 ms/),
    });
    await expect(FeedClient.open(path.join(dir, 'none.sock'), collect().handlers)).rejects.toMatchObject({
      code: 'RQ_ERR_NO_REPLY',
      message: expect.stringMatching(/ENOENT/),
    });
    // A queue that closes the feed before its hello (stopping as the client came).
    await new Promise<void>((r) => server!.close(() => r()));
    await serveRaw((s) => s.end());
    await expect(FeedClient.open(sock, collect().handlers)).rejects.toMatchObject({
      code: 'RQ_ERR_NO_REPLY',
      message: expect.stringMatching(/closed before the hello/),
    });
  });

  it('close() by its owner ends the connection without a closed call', async () => {
    let peerGone!: () => void;
    const gone = new Promise<void>((r) => (peerGone = r));
    await serveRaw((s) => {
      s.on('close', () => peerGone());
      s.write(`${hello}\n`);
    });
    let calls = 0;
    const { client } = await FeedClient.open(sock, { event: () => undefined, closed: () => calls++ });
    client.close();
    await gone;
    expect(calls).toBe(0);
  });

  it('an empty line, a handler that throws and an endless line each end the feed, saying which', async () => {
    // Each write after open() is its own chunk: the empty line starts a chunk (a newline at index 0).
    const writes: ((s: net.Socket) => void)[] = [(s) => s.write('\n'), (s) => s.write(`${ev(8)}\n`)];
    const whys: string[] = [];
    for (const write of writes) {
      let peer!: net.Socket;
      await serveRaw((s) => {
        peer = s;
        s.write(`${hello}\n`);
      });
      const c = collect();
      await FeedClient.open(sock, {
        ...c.handlers,
        event: () => {
          throw new Error('boom');
        },
      });
      await new Promise((r) => setImmediate(r));
      write(peer);
      whys.push(await c.closed);
      await new Promise<void>((r) => server!.close(() => r()));
      server = null;
    }
    expect(whys).toEqual(['protocol error: event feed line is not JSON: ""', 'event handler failed: boom']);

    let peer!: net.Socket;
    await serveRaw((s) => {
      peer = s;
      s.write(`${hello}\n`);
    });
    const c = collect();
    await FeedClient.open(sock, c.handlers);
    // Exactly the limit still waits for its newline; the line then is simply not JSON.
    peer.write('x'.repeat(1024 * 1024), () => peer.write('\n'));
    expect(await c.closed).toBe(`protocol error: event feed line is not JSON: "${'x'.repeat(76)}...`);
    await new Promise<void>((r) => server!.close(() => r()));
    server = null;
    await serveRaw((s) => {
      peer = s;
      s.write(`${hello}\n`);
    });
    const d = collect();
    await FeedClient.open(sock, d.handlers);
    peer.write('x'.repeat(1024 * 1024 + 1));
    expect(await d.closed).toBe('protocol error: a line longer than 1048576 characters');
  });
});
