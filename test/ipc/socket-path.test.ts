// A socket path longer than sun_path holds is refused by every bind and connect, never cut short onto the socket its first 107 bytes name.
import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { FeedClient } from '../../src/ipc/feed-client.js';
import { listenFeed } from '../../src/ipc/feed-server.js';
import { bindPrivate, removeStale } from '../../src/ipc/socket-bind.js';
import { SocketConnection, request } from '../../src/ipc/socket-client.js';
import { requireSocketPath, socketPathRefusal } from '../../src/ipc/socket-path.js';
import { listenSocket } from '../../src/ipc/socket-server.js';
import { silentLogger } from '../../src/log.js';
import { tempDir } from './helpers.js';

const log = silentLogger();

let dir: string;
let cleanup: () => Promise<void>;
const closers: Array<() => unknown> = [];
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await cleanup();
});

/** A path in this test's dir of exactly `n` bytes. */
const pathOf = (n: number, fill = 's') => {
  const p = path.join(dir, fill.repeat(n - Buffer.byteLength(dir) - 1));
  expect(Buffer.byteLength(p)).toBe(n);
  return p;
};

async function refused(p: Promise<unknown>, sock: string): Promise<void> {
  const err = await p.then(
    () => expect.unreachable('expected a refusal'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RqError);
  expect((err as RqError).code).toBe('RQ_ERR_SOCKET_PATH_TOO_LONG');
  expect((err as RqError).message).toBe(
    `socket path ${sock} is 108 bytes, more than the 107 a unix socket path holds; refused rather than cut short onto another socket`,
  );
}

describe('socketPathRefusal', () => {
  it('passes 107 bytes and refuses 108 with a coded error that travels with it (status 500: a check above it was missed)', () => {
    expect(socketPathRefusal(pathOf(107))).toBeNull();
    expect(requireSocketPath(pathOf(107))).toBe(pathOf(107));
    const err = socketPathRefusal(pathOf(108));
    expect(err?.code).toBe('RQ_ERR_SOCKET_PATH_TOO_LONG');
    expect(err?.status).toBe(500);
    expect(() => requireSocketPath(pathOf(108))).toThrow(RqError);
  });

  it('counts bytes, not characters', () => {
    const base = pathOf(106);
    expect(socketPathRefusal(`${base}é`)?.code).toBe('RQ_ERR_SOCKET_PATH_TOO_LONG');
    expect(socketPathRefusal(`${base}e`)).toBeNull();
  });
});

describe('every bind and connect', () => {
  it("a server at exactly 107 bytes listens and answers (the boundary is the kernel's, not a margin)", async () => {
    const at = pathOf(107);
    const server = await listenSocket({ path: at, proto: 'rq1', handle: () => '["pong"]', log });
    closers.push(() => server.close());
    expect(await request(at, 'rq1', 'ping')).toBe('["pong"]');
    const conn = await SocketConnection.open(at, 'rq1');
    closers.push(() => conn.close());
    expect(await conn.request('ping')).toBe('["pong"]');
  });

  it('108 bytes: nothing binds, nothing connects, and the socket its first 107 bytes name never sees a connection', async () => {
    const long = pathOf(108);
    const cut = long.slice(0, -1);
    // The socket a cut-short path would reach: another queue's, listening.
    let reached = 0;
    const other = net.createServer((c) => {
      reached++;
      c.destroy();
    });
    await new Promise<void>((r) => other.listen(cut, r));
    closers.push(() => new Promise<void>((r) => other.close(() => r())));

    await refused(listenSocket({ path: long, proto: 'rq1', handle: () => '["hijacked"]', log }), long);
    await refused(listenFeed({ path: long, log, hello: () => '{}' }), long);
    await refused(removeStale(long, log), long);
    await refused(bindPrivate(net.createServer(), long), long);
    await refused(request(long, 'rq1', 'create_message {}'), long);
    await refused(SocketConnection.open(long, 'rq1'), long);
    await refused(FeedClient.open(long, { event: () => undefined, closed: () => undefined }), long);

    // Nothing was made beside the other socket, and it was never connected to.
    expect(await fsp.readdir(dir)).toEqual([path.basename(cut)]);
    expect(reached).toBe(0);
    // The other socket still works for its own clients.
    await request(cut, 'rq1', 'ping', { timeoutMs: 2000 }).catch(() => undefined);
    expect(reached).toBe(1);
  });
});
