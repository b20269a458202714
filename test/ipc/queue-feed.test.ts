// A queue's feed held open against a raw unix socket server: every event passed on, a skipped number, a lost connection and its return each said as a gap.
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FeedEvent } from '../../src/ipc/feed-event.js';
import { QueueFeed } from '../../src/ipc/queue-feed.js';
import { waitFor } from '../helpers/rq-root.js';
import { capturedLog } from '../helpers/captured-log.js';
import { tempDir } from './helpers.js';

let cleanup: () => Promise<void>;
let sock: string;
let server: net.Server;
let feed: QueueFeed | null = null;
/** The server's side of each connection, in the order they came. */
const conns: net.Socket[] = [];

const hello = (pid: number, seq: number) => JSON.stringify({ type: 'hello', queue: 'q', pid, seq, at: 1 }) + '\n';
const ev = (seq: number) =>
  JSON.stringify({ seq, at: 2, queue: 'q', type: 'moved', msg_id: '20261121.1643.46.613.2164022', from: 'que', to: 'run', actor: 'dispatcher' }) + '\n';

beforeEach(async () => {
  let dir: string;
  ({ dir, cleanup } = await tempDir());
  sock = path.join(dir, 'events.sock');
  conns.length = 0;
  server = net.createServer((c) => {
    conns.push(c);
    c.write(hello(40 + conns.length, 7));
  });
  await new Promise<void>((r) => server.listen(sock, r));
});
afterEach(async () => {
  feed?.close();
  feed = null;
  for (const c of conns) c.destroy();
  await new Promise<void>((r) => server.close(() => r()));
  await cleanup();
});

function open() {
  const events: number[] = [];
  const gaps: string[] = [];
  const { log, lines } = capturedLog();
  feed = new QueueFeed({
    queue: 'q',
    path: sock,
    log,
    event: (e: FeedEvent) => void events.push(e.seq),
    gap: (reason) => void gaps.push(reason),
    retryMs: { min: 10, max: 20 },
  });
  return { feed, events, gaps, lines };
}

describe('QueueFeed', () => {
  it('passes every event on in order; a skipped number is a gap naming the last seen and the next', async () => {
    const f = open();
    await f.feed.first;
    expect(f.feed.state()).toEqual({ up: true, pid: 41, seq: 7 });
    conns[0].write(ev(8) + ev(9) + ev(12) + ev(13));
    await waitFor(() => f.events.length === 4, 'four events');
    expect(f.events).toEqual([8, 9, 12, 13]);
    expect(f.gaps).toEqual(['the feed of q skipped from 9 to 12']);
    expect(f.feed.state()).toEqual({ up: true, pid: 41, seq: 13 });
  });

  it('a lost connection is a gap and a warning; it reconnects, and its return is a gap naming the new process', async () => {
    const f = open();
    await f.feed.first;
    conns[0].destroy();
    await waitFor(() => conns.length === 2 && f.feed.state().up, 'the feed to reconnect');
    expect(f.gaps).toEqual([expect.stringMatching(/^the feed of q was lost: /), 'the feed of q is back (pid 42)']);
    expect(f.lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual(['event feed lost; reconnecting']);
    // Numbering starts again from the new hello's.
    conns[1].write(ev(8));
    await waitFor(() => f.events.length === 1, 'the event after the return');
    expect(f.gaps).toHaveLength(2);
  });
});
