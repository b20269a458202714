import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { encodeFrame } from '../../src/ipc/framing.js';
import { request } from '../../src/ipc/socket-client.js';
import { listenSocket, type SocketServer } from '../../src/ipc/socket-server.js';
import { silentLogger } from '../../src/log.js';
import { converse, exchange, sleep, staleSocket, tempDir } from './helpers.js';
import { waitFor } from '../helpers/rq-root.js';
import { seededRandom } from '../helpers/seeded-random.mjs';

const log = silentLogger();
let dir: string;
let cleanup: () => Promise<void>;
let sock: string;
const servers: SocketServer[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  sock = path.join(dir, 'queue.sock');
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await cleanup();
});

async function serve(handle: (payload: string) => Promise<string> | string, more: { proto?: 'rq1' | 'rq2'; idleMs?: number } = {}) {
  const server = await listenSocket({ path: sock, proto: more.proto ?? 'rq1', handle, log, idleMs: more.idleMs });
  servers.push(server);
  return server;
}

describe('listenSocket', () => {
  it('refuses a socket path it cannot even probe, naming it and why', async () => {
    // A regular file where a directory of the path should be: lstat fails with ENOTDIR, which is neither "free" nor "stale".
    const file = path.join(dir, 'not-a-dir');
    await fsp.writeFile(file, '');
    const bad = path.join(file, 'queue.sock');
    const err = await listenSocket({ path: bad, proto: 'rq1', handle: () => '', log }).then(
      () => expect.unreachable('expected a refusal'),
      (e: unknown) => e as RqError,
    );
    expect(err.code).toBe('RQ_ERR_SOCKET_PATH');
    expect(err.message.startsWith(`cannot check socket path ${bad}: `)).toBe(true);
    expect(err.message).toMatch(/ENOTDIR/);
  });

  it('answers many requests on one connection in order, even when later ones finish first', async () => {
    // Random handler times: a server that answered in completion order would shuffle the replies.
    const rng = seededRandom();
    await serve(async (p) => {
      await sleep(rng.next() * 10);
      return JSON.stringify(['echo', p]);
    });
    const sent = Array.from({ length: 30 }, (_, i) => `req ${i}`);
    const replies = await exchange(sock, 'rq1', sent);
    expect(replies, rng.replay).toEqual(sent.map((p) => JSON.stringify(['echo', p])));
  });

  it('serves 50 concurrent clients', async () => {
    const server = await serve(async (p) => {
      await sleep(5);
      return `got ${p}`;
    });
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => request(sock, 'rq1', `n${i}`)));
    expect(replies).toEqual(Array.from({ length: 50 }, (_, i) => `got n${i}`));
    // Each client closes once it has its reply; the server counts a connection until it sees that.
    await waitFor(() => server.connections() === 0, 'the server to see every client go');
  });

  it('runs connections independently: a slow request does not hold up another client', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let slowIn!: () => void;
    const slowStarted = new Promise<void>((r) => (slowIn = r));
    await serve(async (p) => {
      if (p === 'slow') {
        slowIn();
        await gate;
      }
      if (p === 'fast') release();
      return p;
    });
    const slow = request(sock, 'rq1', 'slow', { timeoutMs: 2000 });
    // Only once the slow handler holds its connection does the fast request prove anything.
    await slowStarted;
    expect(await request(sock, 'rq1', 'fast', { timeoutMs: 2000 })).toBe('fast');
    expect(await slow).toBe('slow');
  });

  it('answers a throwing handler with a fail reply and keeps serving', async () => {
    await serve((p) => {
      if (p === 'boom') throw new Error('kaput');
      return '["pong"]';
    });
    expect(await exchange(sock, 'rq1', ['boom', 'ping ', 'boom'])).toEqual([
      '["fail","internal error: kaput"]',
      '["pong"]',
      '["fail","internal error: kaput"]',
    ]);
    expect(await request(sock, 'rq1', 'ping ')).toBe('["pong"]');
  });

  it('answers a throwing rq2 handler with an error reply', async () => {
    await serve(
      async (p) => {
        if (p.includes('boom')) throw new Error('kaput');
        return JSON.stringify(['ok', JSON.parse(p)[1]]);
      },
      { proto: 'rq2' },
    );
    expect(await exchange(sock, 'rq2', ['["boom",null]', '["x",5]'])).toEqual(['["error","kaput"]', '["ok",5]']);
  });

  it('answers a bad magic with a protocol error and closes the connection', async () => {
    await serve(() => '["pong"]');
    const got = await converse(sock, 'rq1', Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    expect(got.closed).toBe(true);
    expect(got.replies).toHaveLength(1);
    expect(JSON.parse(got.replies[0])).toEqual(['fail', expect.stringMatching(/^protocol error: bad frame magic "GET "/)]);
    expect(await request(sock, 'rq1', 'ping ')).toBe('["pong"]');
  });

  it('answers frames received before the bad bytes first', async () => {
    await serve((p) => `re ${p}`);
    const got = await converse(sock, 'rq1', Buffer.concat([encodeFrame('rq1', 'a'), encodeFrame('rq1', 'b'), Buffer.from('rq1 12345678x')]));
    expect(got.replies.slice(0, 2)).toEqual(['re a', 're b']);
    expect(got.replies[2]).toMatch(/^\["fail","protocol error: missing space/);
  });

  it('uses the error shape of rq2 for protocol errors on rq2', async () => {
    await serve(() => '[]', { proto: 'rq2' });
    const got = await converse(sock, 'rq2', encodeFrame('rq1', 'x'));
    expect(JSON.parse(got.replies[0])).toEqual(['error', expect.stringMatching(/^protocol error: bad frame magic/)]);
  });

  it('creates the socket with mode 0600 even under a permissive umask, and restores the umask', async () => {
    const before = process.umask(0o000);
    try {
      await serve(() => '');
      expect(process.umask()).toBe(0o000);
    } finally {
      process.umask(before);
    }
    const st = await fsp.stat(sock);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
  });

  it('replaces a stale socket file', async () => {
    await staleSocket(sock);
    expect((await fsp.lstat(sock)).isSocket()).toBe(true);
    await expect(request(sock, 'rq1', 'ping ', { timeoutMs: 1000 })).rejects.toThrow(/ECONNREFUSED/);
    await serve(() => '["pong"]');
    expect(await request(sock, 'rq1', 'ping ')).toBe('["pong"]');
  });

  it('refuses to delete a regular file at the path', async () => {
    await fsp.writeFile(sock, 'precious');
    const err = await listenSocket({ path: sock, proto: 'rq1', handle: () => '', log }).catch((e) => e);
    expect(err).toBeInstanceOf(RqError);
    expect(err.code).toBe('RQ_ERR_SOCKET_PATH');
    expect(err.message).toContain(sock);
    expect(err.message).toContain('not a socket');
    expect(await fsp.readFile(sock, 'utf8')).toBe('precious');
  });

  it('refuses to take over a socket another server is listening on', async () => {
    await serve(() => 'first');
    const err = await listenSocket({ path: sock, proto: 'rq1', handle: () => 'second', log }).catch((e) => e);
    expect(err).toBeInstanceOf(RqError);
    expect(err.code).toBe('RQ_ERR_SOCKET_IN_USE');
    expect(await request(sock, 'rq1', 'x')).toBe('first');
  });

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
    const idle = net.createConnection(sock);
    await new Promise((r) => idle.once('connect', r));
    const idleClosed = new Promise((r) => idle.once('close', r));
    const reply = request(sock, 'rq1', 'slow');
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
    await expect(fsp.lstat(sock)).rejects.toThrow(/ENOENT/);
    await expect(request(sock, 'rq1', 'again', { timeoutMs: 500 })).rejects.toThrow(/ENOENT/);
  });

  it('closes idle connections after idleMs', async () => {
    const server = await serve(() => 'ok', { idleMs: 100 });
    const t0 = Date.now();
    const c = net.createConnection(sock);
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
    await serve(async () => {
      await sleep(300);
      return 'late';
    }, { idleMs: 100 });
    expect(await request(sock, 'rq1', 'x', { timeoutMs: 2000 })).toBe('late');
  });

  it('still replies to a client that half-closes after sending', async () => {
    await serve((p) => `re ${p}`);
    const got = await new Promise<string>((resolve, reject) => {
      const c = net.createConnection(sock);
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
        const c = net.createConnection(sock);
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
});
