// Shared fixtures for the ipc tests: temp dirs and socket places, stale and foreign socket files, raw framed conversations.
import { execFile, spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { RqError } from '../../src/errors.js';
import { FrameDecoder, encodeFrame, type Proto } from '../../src/ipc/framing.js';
import type { Connection } from '../../src/ipc/reply-codes.js';
import { type SocketServer, listenSocket } from '../../src/ipc/socket-server.js';
import { silentLogger } from '../../src/log.js';

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-ipc-'));
  return { dir, cleanup: () => fsp.rm(dir, { recursive: true, force: true }) };
}

/** Leaves a socket file nobody listens on, as a SIGKILLed daemon does. */
export function staleSocket(sockPath: string): Promise<void> {
  const script = `require('net').createServer().listen(${JSON.stringify(sockPath)}, () => process.kill(process.pid, 'SIGKILL'))`;
  return new Promise((resolve) => execFile(process.execPath, ['-e', script], () => resolve()));
}

/** Sends raw bytes on one connection and collects reply payloads until the server closes it. */
export function converse(sockPath: string, proto: Proto, bytes: Buffer): Promise<{ replies: string[]; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const decoder = new FrameDecoder(proto);
    const replies: string[] = [];
    const sock = net.createConnection(sockPath);
    sock.on('data', (d) => replies.push(...decoder.push(d).map((b) => b.toString('utf8'))));
    sock.on('error', reject);
    sock.on('close', () => resolve({ replies, closed: true }));
    sock.write(bytes);
  });
}

/** Opens a raw connection and resolves with the first `count` reply payloads. */
export function exchange(sockPath: string, proto: Proto, payloads: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const decoder = new FrameDecoder(proto);
    const replies: string[] = [];
    const sock = net.createConnection(sockPath);
    sock.on('data', (d) => {
      replies.push(...decoder.push(d).map((b) => b.toString('utf8')));
      if (replies.length >= payloads.length) {
        sock.destroy();
        resolve(replies);
      }
    });
    sock.on('error', reject);
    sock.write(Buffer.concat(payloads.map((p) => encodeFrame(proto, p))));
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface SocketPlace {
  /** This test's temp dir and the socket path in it. */
  readonly dir: string;
  readonly sock: string;
  /** Runs `close` after the test; the last deferred runs first. */
  defer(close: () => unknown): void;
  /** A listenSocket at `sock` (or `at`), closed after the test. */
  serve(
    handle: (payload: string, conn: Connection) => Promise<string> | string,
    opts?: { proto?: Proto; idleMs?: number; at?: string; maxConnections?: number; requestMs?: number },
  ): Promise<SocketServer>;
  /** A plain net server at `sock` that does something unhelpful with each connection; its connections are destroyed after the test. */
  rawServer(onConnection: (c: net.Socket) => void): Promise<void>;
}

/** A fresh temp dir per test with a socket path `name` in it, and what the test starts there, stopped after it. */
export function socketPlace(name = 'queue.sock'): SocketPlace {
  let cleanup: () => Promise<void>;
  const closers: Array<() => unknown> = [];
  const place = {
    dir: '',
    sock: '',
    defer: (close: () => unknown) => void closers.push(close),
    async serve(
      handle: (payload: string, conn: Connection) => Promise<string> | string,
      opts: { proto?: Proto; idleMs?: number; at?: string; maxConnections?: number; requestMs?: number } = {},
    ) {
      const server = await listenSocket({
        path: opts.at ?? place.sock,
        proto: opts.proto ?? 'rq1',
        handle,
        log: silentLogger(),
        idleMs: opts.idleMs,
        maxConnections: opts.maxConnections,
        requestMs: opts.requestMs,
      });
      closers.push(() => server.close());
      return server;
    },
    async rawServer(onConnection: (c: net.Socket) => void) {
      const conns = new Set<net.Socket>();
      const server = net.createServer((c) => {
        conns.add(c);
        onConnection(c);
      });
      await new Promise<void>((r) => server.listen(place.sock, r));
      closers.push(
        () =>
          new Promise<void>((r) => {
            server.close(() => r());
            // A connection nobody reads from would never see the client's EOF.
            for (const c of conns) c.destroy();
          }),
      );
    },
  };
  beforeEach(async () => {
    const t = await tempDir();
    cleanup = t.cleanup;
    place.dir = t.dir;
    place.sock = path.join(t.dir, name);
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await cleanup();
  });
  return place;
}

/**
 * A socket file held by a live process that is not an rq server: `stuck` listens with a backlog of
 * one and never accepts (a hung owner), `dgram` is a bound datagram socket. Python, because node
 * can do neither. Resolves once the socket is bound; `stop` kills the process.
 */
export async function foreignSocket(sockPath: string, kind: 'stuck' | 'dgram'): Promise<{ stop: () => Promise<void> }> {
  const script = [
    'import signal, socket, sys',
    `s = socket.socket(socket.AF_UNIX, socket.${kind === 'stuck' ? 'SOCK_STREAM' : 'SOCK_DGRAM'})`,
    's.bind(sys.argv[1])',
    kind === 'stuck' ? 's.listen(1)' : '',
    "print('ready', flush=True)",
    'signal.pause()',
  ].join('\n');
  const child = spawn('python3', ['-c', script, sockPath], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`python3 socket holder exited ${code}`)));
  });
  return {
    stop: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Connects to `sockPath` until the kernel turns a connection away (a full backlog): the connections made are returned. */
export async function fillBacklog(sockPath: string): Promise<{ refusal: NodeJS.ErrnoException; held: net.Socket[] }> {
  const held: net.Socket[] = [];
  for (let i = 0; i < 64; i++) {
    const c = net.createConnection(sockPath);
    const err = await new Promise<NodeJS.ErrnoException | null>((r) => {
      c.once('connect', () => r(null));
      c.once('error', (e) => r(e));
    });
    if (err) return { refusal: err, held };
    held.push(c);
  }
  throw new Error(`64 connections to ${sockPath} and none turned away`);
}

/** A promise and the function that settles it: a handler waits on it until the test lets it go. */
export function latch(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

export interface RawClient {
  socket: net.Socket;
  /** Reply payloads as they arrived. */
  replies: string[];
  send(payload: string): void;
  /** Resolves once `n` replies are in. */
  replied(n: number): Promise<string[]>;
  /** The server's end of stream, and the connection's close. */
  ended: Promise<void>;
  closed: Promise<void>;
}

/** A connected raw client; `allowHalfOpen` keeps its side open after the server's end, as a stuck client would. */
export async function rawClient(sockPath: string, opts: { allowHalfOpen?: boolean } = {}): Promise<RawClient> {
  const socket = net.createConnection({ path: sockPath, allowHalfOpen: opts.allowHalfOpen ?? false });
  const decoder = new FrameDecoder('rq1');
  const replies: string[] = [];
  const waiters: Array<{ n: number; resolve: (r: string[]) => void }> = [];
  socket.on('data', (d) => {
    replies.push(...decoder.push(d).map((b) => b.toString('utf8')));
    for (const w of waiters.filter((x) => replies.length >= x.n)) w.resolve(replies.slice());
  });
  const ended = new Promise<void>((r) => socket.once('end', () => r()));
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    replies,
    send: (payload) => void socket.write(encodeFrame('rq1', payload)),
    replied: (n) => (replies.length >= n ? Promise.resolve(replies.slice()) : new Promise((resolve) => waiters.push({ n, resolve }))),
    ended,
    closed,
  };
}

/** The RQ_ERR_NO_REPLY `p` rejects with, its text naming `sockPath`. */
export async function noReplyFrom(p: Promise<unknown>, sockPath: string): Promise<RqError> {
  const err = await p.then(
    () => expect.unreachable('expected a rejection'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RqError);
  expect((err as RqError).code).toBe('RQ_ERR_NO_REPLY');
  expect((err as RqError).message.startsWith(`no reply from ${sockPath}: `)).toBe(true);
  return err as RqError;
}

/**
 * Holds the event loop for `ms`. Used to let a timer fall due before a connect completes: libuv runs
 * due timers before it polls for I/O, so the next turn fires the timer first, whatever the socket did.
 */
export function holdLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * A server that takes one chunk of a request, then drops the connection with the rest unread:
 * the kernel then resets the client's side, which fails with an error (EPIPE, ECONNRESET)
 * rather than a plain end. Clients send it more than a socket buffer holds.
 */
export const resetAfterFirstChunk = (c: net.Socket): void => void c.once('data', () => c.destroy());
export const OVER_A_SOCKET_BUFFER = 'x'.repeat(8 << 20);
