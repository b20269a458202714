// The socket server: taking its path (stale, live, foreign or bad), its mode, and the replies it gives (handler results, failures, protocol errors).
import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { MAX_FRAME_BYTES, encodeFrame } from '../../src/ipc/framing.js';
import { SocketConnection, request } from '../../src/ipc/socket-client.js';
import { bindPrivate } from '../../src/ipc/socket-bind.js';
import { listenSocket } from '../../src/ipc/socket-server.js';
import { silentLogger } from '../../src/log.js';
import { converse, exchange, fillBacklog, foreignSocket, sleep, socketPlace, staleSocket } from './helpers.js';
import { waitFor } from '../helpers/rq-root.js';
import { seededRandom } from '../helpers/seeded-random.mjs';

const log = silentLogger();
const place = socketPlace();
const serve = place.serve;

/** The RqError `p` rejects with. */
async function refusal(p: Promise<unknown>): Promise<RqError> {
  const err = await p.then(
    () => expect.unreachable('expected a refusal'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RqError);
  return err as RqError;
}

describe('listenSocket', () => {
  it('refuses a socket path it cannot even probe, naming it and why', async () => {
    // A regular file where a directory of the path should be: lstat fails with ENOTDIR, which is neither "free" nor "stale".
    const file = path.join(place.dir, 'not-a-dir');
    await fsp.writeFile(file, '');
    const bad = path.join(file, 'queue.sock');
    const err = await refusal(listenSocket({ path: bad, proto: 'rq1', handle: () => '', log }));
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
    const replies = await exchange(place.sock, 'rq1', sent);
    expect(replies, rng.replay).toEqual(sent.map((p) => JSON.stringify(['echo', p])));
  });

  it('serves 50 concurrent clients', async () => {
    const server = await serve(async (p) => {
      await sleep(5);
      return `got ${p}`;
    });
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => request(place.sock, 'rq1', `n${i}`)));
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
    const slow = request(place.sock, 'rq1', 'slow', { timeoutMs: 2000 });
    // Only once the slow handler holds its connection does the fast request prove anything.
    await slowStarted;
    expect(await request(place.sock, 'rq1', 'fast', { timeoutMs: 2000 })).toBe('fast');
    expect(await slow).toBe('slow');
  });

  it('answers a throwing handler with a fail reply and keeps serving', async () => {
    await serve((p) => {
      if (p === 'boom') throw new Error('kaput');
      return '["pong"]';
    });
    expect(await exchange(place.sock, 'rq1', ['boom', 'ping ', 'boom'])).toEqual([
      '["fail","internal error: kaput"]',
      '["pong"]',
      '["fail","internal error: kaput"]',
    ]);
    expect(await request(place.sock, 'rq1', 'ping ')).toBe('["pong"]');
  });

  it('answers a throwing rq2 handler with an error reply', async () => {
    await serve(
      async (p) => {
        if (p.includes('boom')) throw new Error('kaput');
        return JSON.stringify(['ok', JSON.parse(p)[1]]);
      },
      { proto: 'rq2' },
    );
    expect(await exchange(place.sock, 'rq2', ['["boom",null]', '["x",5]'])).toEqual(['["error","kaput"]', '["ok",5]']);
  });

  it('answers a bad magic with a protocol error and closes the connection', async () => {
    await serve(() => '["pong"]');
    const got = await converse(place.sock, 'rq1', Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    expect(got.closed).toBe(true);
    expect(got.replies).toHaveLength(1);
    expect(JSON.parse(got.replies[0])).toEqual(['fail', expect.stringMatching(/^protocol error: bad frame magic "GET "/)]);
    expect(await request(place.sock, 'rq1', 'ping ')).toBe('["pong"]');
  });

  it('answers frames received before the bad bytes first', async () => {
    await serve((p) => `re ${p}`);
    const got = await converse(place.sock, 'rq1', Buffer.concat([encodeFrame('rq1', 'a'), encodeFrame('rq1', 'b'), Buffer.from('rq1 12345678x')]));
    expect(got.replies.slice(0, 2)).toEqual(['re a', 're b']);
    expect(got.replies[2]).toMatch(/^\["fail","protocol error: missing space/);
  });

  it('uses the error shape of rq2 for protocol errors on rq2', async () => {
    await serve(() => '[]', { proto: 'rq2' });
    const got = await converse(place.sock, 'rq2', encodeFrame('rq1', 'x'));
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
    const st = await fsp.stat(place.sock);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
  });

  it('replaces a stale socket file', async () => {
    await staleSocket(place.sock);
    expect((await fsp.lstat(place.sock)).isSocket()).toBe(true);
    await expect(request(place.sock, 'rq1', 'ping ', { timeoutMs: 1000 })).rejects.toThrow(/ECONNREFUSED/);
    await serve(() => '["pong"]');
    expect(await request(place.sock, 'rq1', 'ping ')).toBe('["pong"]');
  });

  it('refuses to delete a regular file at the path', async () => {
    await fsp.writeFile(place.sock, 'precious');
    const err = await listenSocket({ path: place.sock, proto: 'rq1', handle: () => '', log }).catch((e) => e);
    expect(err).toBeInstanceOf(RqError);
    expect(err.code).toBe('RQ_ERR_SOCKET_PATH');
    expect(err.message).toContain(place.sock);
    expect(err.message).toContain('not a socket');
    expect(await fsp.readFile(place.sock, 'utf8')).toBe('precious');
  });

  it('refuses to take over a socket another server is listening on', async () => {
    await serve(() => 'first');
    const err = await listenSocket({ path: place.sock, proto: 'rq1', handle: () => 'second', log }).catch((e) => e);
    expect(err).toBeInstanceOf(RqError);
    expect(err.code).toBe('RQ_ERR_SOCKET_IN_USE');
    expect(await request(place.sock, 'rq1', 'x')).toBe('first');
  });

  it('refuses a socket whose owner is alive but not accepting (a full backlog), and leaves it in place', async () => {
    const owner = await foreignSocket(place.sock, 'stuck');
    place.defer(owner.stop);
    const { refusal: turnedAway, held } = await fillBacklog(place.sock);
    place.defer(() => held.forEach((c) => c.destroy()));
    expect(turnedAway.code).toBe('EAGAIN');
    const err = await refusal(listenSocket({ path: place.sock, proto: 'rq1', handle: () => '', log }));
    expect(err.code).toBe('RQ_ERR_SOCKET_IN_USE');
    expect((await fsp.lstat(place.sock)).isSocket()).toBe(true);
  });

  it('refuses a socket it cannot probe (a live datagram socket), naming it and why, and leaves it in place', async () => {
    const owner = await foreignSocket(place.sock, 'dgram');
    place.defer(owner.stop);
    const err = await refusal(listenSocket({ path: place.sock, proto: 'rq1', handle: () => '', log }));
    expect(err.code).toBe('RQ_ERR_SOCKET_PATH');
    expect(err.message).toMatch(new RegExp(`^cannot check socket ${place.sock}: .*EPROTOTYPE`));
    expect((await fsp.lstat(place.sock)).isSocket()).toBe(true);
  });

  it('bindPrivate: a path already taken is in use, any other failure to listen is a bad path; the umask is restored either way', async () => {
    const umask = process.umask();
    const taken = path.join(place.dir, 'taken');
    await fsp.writeFile(taken, '');
    const inUse = await refusal(bindPrivate(net.createServer(), taken));
    expect(inUse.code).toBe('RQ_ERR_SOCKET_IN_USE');
    expect(inUse.message).toBe(`another process is already listening on ${taken}`);
    const nowhere = path.join(place.dir, 'missing', 'q.sock');
    const bad = await refusal(bindPrivate(net.createServer(), nowhere));
    expect(bad.code).toBe('RQ_ERR_SOCKET_PATH');
    expect(bad.message.startsWith(`cannot listen on ${nowhere}: listen E`)).toBe(true);
    expect(process.umask()).toBe(umask);
  });

  it("answers a reply too long for the frame with an error in the protocol's shape", async () => {
    const huge = 'x'.repeat(MAX_FRAME_BYTES + 1);
    const over = `payload of ${MAX_FRAME_BYTES + 1} bytes is over the ${MAX_FRAME_BYTES} bytes an 8-digit length can carry`;
    await serve(() => huge);
    expect(JSON.parse(await request(place.sock, 'rq1', 'x'))).toEqual(['fail', `internal error: rq1 ${over}`]);
    const rq2 = path.join(place.dir, 'rq2.sock');
    await serve(() => huge, { proto: 'rq2', at: rq2 });
    expect(JSON.parse(await request(rq2, 'rq2', '["x",null]'))).toEqual(['error', `rq2 ${over}`]);
  });

  it('answers a connection past maxConnections with a busy error, without running its request, and serves again once one closes', async () => {
    let handled = 0;
    const server = await serve(
      (p) => {
        handled++;
        return JSON.stringify(['ok', p]);
      },
      { maxConnections: 3 },
    );
    const held = await Promise.all(
      Array.from(
        { length: 3 },
        () =>
          new Promise<net.Socket>((r) => {
            const c = net.connect(place.sock, () => r(c));
          }),
      ),
    );
    await waitFor(() => server.connections() === 3, 'three connections held');
    const busy = JSON.parse(await request(place.sock, 'rq1', 'create me'));
    expect(busy).toEqual([
      'fail',
      `3 connections are open on ${place.sock}, the most it serves (max_socket_connections in config/config.json); try again later`,
    ]);
    // A client that opens with a hello (the CLI's, asking for codes) hears the refusal as its request's answer, one-shot or kept.
    expect(JSON.parse(await request(place.sock, 'rq1', 'create me', { hello: 'codes' }))).toEqual(busy);
    const conn = await SocketConnection.open(place.sock, 'rq1', { hello: 'codes' });
    expect(JSON.parse(await conn.request('create me'))).toEqual(busy);
    conn.close();
    expect(handled).toBe(0);
    held[0].destroy();
    await waitFor(() => server.connections() === 2, 'a held connection to close');
    expect(JSON.parse(await request(place.sock, 'rq1', 'now'))).toEqual(['ok', 'now']);
    for (const c of held) c.destroy();
  });

  it('closes a connection whose request is not whole within requestMs, however steadily it drips', async () => {
    await serve(() => '["ok"]', { requestMs: 300, idleMs: 30_000 });
    const c = net.connect(place.sock);
    let out = '';
    c.on('data', (d) => (out += d));
    const frame = encodeFrame('rq1', 'x'.repeat(100));
    let i = 0;
    // One byte every 20 ms: the idle timer never fires, only the request's own deadline can end it.
    const drip = setInterval(() => c.write(frame.subarray(i, ++i)), 20);
    await new Promise((r) => c.once('close', r));
    clearInterval(drip);
    expect(i).toBeLessThan(frame.length);
    expect(out).toMatch(/^rq1 \d{8} \["fail","protocol error: request not whole after 300 ms \(\d+ bytes received\)"\]$/);
  });

  it('tells a request begun and then silent for idleMs why it is cut, and closes', async () => {
    await serve(() => '["ok"]', { idleMs: 200, requestMs: 60_000 });
    for (const partial of ['rq1 0000', 'rq1 00000010 ab']) {
      const c = net.connect(place.sock);
      let out = '';
      c.on('data', (d) => (out += d));
      c.write(partial);
      await new Promise((r) => c.once('close', r));
      expect(out, partial).toMatch(/^rq1 \d{8} \["fail","protocol error: request not whole after 200 ms without a byte \(\d+ bytes received\)"\]$/);
    }
  });
});
