// The push-only feed server over real unix sockets: hello first, every line to every reader, a reader that stops reading is dropped while the others get everything, stale and live files, close.
import fsp from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FeedServer, listenFeed } from '../../src/ipc/feed-server.js';
import { silentLogger } from '../../src/log.js';
import { staleSocket, tempDir } from './helpers.js';

const log = silentLogger();
let dir: string;
let cleanup: () => Promise<void>;
let sock: string;
const servers: FeedServer[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  sock = path.join(dir, 'events.sock');
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await cleanup();
});

async function serve(more: { maxPendingBytes?: number; maxReaders?: number } = {}): Promise<FeedServer> {
  let n = 0;
  const server = await listenFeed({ path: sock, log, hello: () => `hello ${++n}`, ...more });
  servers.push(server);
  return server;
}

/** A raw reader: its lines so far, a wait for a count of them, and whether the server closed it. */
function rawReader(): Promise<{ socket: net.Socket; lines: string[]; closed: Promise<void>; lineCount(n: number): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(sock);
    const lines: string[] = [];
    let buf = '';
    const waits: (() => void)[] = [];
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      buf += chunk;
      const parts = buf.split('\n');
      buf = parts.pop()!;
      lines.push(...parts);
      for (const w of waits.splice(0)) w();
    });
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    const lineCount = (n: number): Promise<void> =>
      lines.length >= n ? Promise.resolve() : new Promise<void>((r) => waits.push(() => void lineCount(n).then(r)));
    socket.once('connect', () => resolve({ socket, lines, closed, lineCount }));
    socket.once('error', reject);
  });
}

const nextTick = () => new Promise<void>((r) => setImmediate(r));

describe('listenFeed', () => {
  it('greets each reader with the hello, then sends every line to every reader; the file is private', async () => {
    const server = await serve();
    expect((await fsp.stat(sock)).mode & 0o777).toBe(0o600);
    const a = await rawReader();
    await a.lineCount(1);
    const b = await rawReader();
    await b.lineCount(1);
    expect(server.readers()).toBe(2);
    for (let i = 1; i <= 100; i++) server.send(`line ${i}`);
    await Promise.all([a.lineCount(101), b.lineCount(101)]);
    expect(a.lines).toEqual(['hello 1', ...Array.from({ length: 100 }, (_, i) => `line ${i + 1}`)]);
    expect(b.lines).toEqual(['hello 2', ...a.lines.slice(1)]);
    a.socket.destroy();
    await a.closed;
    server.send('after');
    await b.lineCount(102);
    expect(server.readers()).toBe(1);
  });

  it('drops a reader that stops reading once its backlog passes the bound; the others get every line', async () => {
    const server = await serve({ maxPendingBytes: 64 * 1024 });
    const slow = await rawReader();
    const fast = await rawReader();
    await Promise.all([slow.lineCount(1), fast.lineCount(1)]);
    slow.socket.pause();
    const line = 'x'.repeat(1000);
    // 4 MB, one flush per tick, far past what the kernel buffers for a reader that never reads.
    for (let i = 0; i < 4000; i++) {
      server.send(`${i} ${line}`);
      if (i % 10 === 9) await nextTick();
    }
    await fast.lineCount(4001);
    expect(fast.lines.slice(1).map((l) => Number(l.split(' ')[0]))).toEqual(Array.from({ length: 4000 }, (_, i) => i));
    expect(server.readers()).toBe(1);
    // A paused socket does not read, so it only sees the end once it reads again: what it got, then the cut.
    slow.socket.resume();
    await slow.closed;
    expect(slow.lines.length).toBeLessThan(4001);
    expect(slow.lines.slice(1).map((l) => Number(l.split(' ')[0]))).toEqual(Array.from({ length: slow.lines.length - 1 }, (_, i) => i));
  });

  it('refuses readers past maxReaders', async () => {
    const server = await serve({ maxReaders: 1 });
    const a = await rawReader();
    await a.lineCount(1);
    const b = await rawReader();
    await b.closed;
    expect(b.lines).toEqual([]);
    expect(server.readers()).toBe(1);
  });

  it('replaces a stale socket file, refuses a live one, and removes its file at close after ending its readers', async () => {
    await staleSocket(sock);
    const server = await serve();
    // Its probe of the live file is a reader for a moment (it gets `hello 1`).
    await expect(listenFeed({ path: sock, log, hello: () => 'second' })).rejects.toMatchObject({ code: 'RQ_ERR_SOCKET_IN_USE' });
    const a = await rawReader();
    await a.lineCount(1);
    server.send('last words');
    await server.close();
    await a.closed;
    expect(a.lines).toEqual(['hello 2', 'last words']);
    await expect(fsp.stat(sock)).rejects.toThrow(/ENOENT/);
    server.send('ignored after close');
  });
});
