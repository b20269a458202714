// Bounded drain (src/web/bounded-drain.ts) on a real HTTP server and real sockets: a client still sending after its refusal sends on and keeps its connection; the bounds cut it.
import http from 'node:http';
import net from 'node:net';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { DRAIN_BOUNDS, drainAfterAnswer } from '../../src/web/bounded-drain.js';

const CHUNK = Buffer.alloc(64 * 1024, 120);
/** The body a client means to send: the first chunk, then `REST` more. */
const REST = 64;
const HEAD = `POST /up HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${(REST + 1) * CHUNK.length}\r\n\r\n`;

let server: http.Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

/**
 * A server that refuses a POST at once (413) while its body is piped into a parser that never reads
 * again, as a multipart parser that gave up does; answers a GET with 200. `bounds` as drainAfterAnswer
 * takes them. `closeListeners`: the socket's 'close' listeners as the first POST arrived and as the GET
 * is answered (once every callback of the requests before it has run).
 */
async function refusingServer(bounds: Partial<typeof DRAIN_BOUNDS>): Promise<{ port: number; closed: Promise<void>; closeListeners: number[] }> {
  let closedNow: () => void;
  const closed = new Promise<void>((r) => (closedNow = r));
  const closeListeners: number[] = [];
  server = http.createServer((req, res) => {
    if (closeListeners.length === 0) {
      closeListeners.push(req.socket.listenerCount('close'));
      req.socket.once('close', () => closedNow());
    }
    if (req.method === 'GET') return void setImmediate(() => (closeListeners.push(req.socket.listenerCount('close')), res.end('still here')));
    req.pipe(new Writable({ highWaterMark: 1, write: () => {} }));
    drainAfterAnswer(req, res, { ...DRAIN_BOUNDS, ...bounds });
    res.writeHead(413, { 'content-type': 'text/plain' }).end('413 - too large');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as net.AddressInfo).port, closed, closeListeners };
}

interface Client {
  socket: net.Socket;
  /** Everything the server sent so far. */
  text(): string;
  errors: string[];
}

/** Connects, sends `head` and `first`, and resolves once the answer is in. `allowHalfOpen`: sends on after the server's FIN. */
async function answered(port: number, head = HEAD, first: Buffer | string = CHUNK, allowHalfOpen = false): Promise<Client> {
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen });
  const errors: string[] = [];
  socket.on('error', (e: NodeJS.ErrnoException) => errors.push(String(e.code)));
  let text = '';
  socket.on('data', (d: Buffer) => (text += d.toString()));
  const c = { socket, text: () => text, errors };
  await refusedAgain(c, head, first);
  return c;
}

/** On `c`'s connection, sends another `head` and `first`, and resolves once its answer is in. */
async function refusedAgain(c: Client, head = HEAD, first: Buffer | string = CHUNK): Promise<void> {
  const answers = () => c.text().split('413 - too large').length - 1;
  const want = answers() + 1;
  const arrived = new Promise<void>((resolve) => {
    const seen = () => answers() >= want && (c.socket.off('data', seen), resolve());
    c.socket.on('data', seen);
  });
  c.socket.write(head);
  c.socket.write(first);
  await arrived;
}

/** Writes `chunks` more of the body, each after the last drained, until done or the socket is gone. */
async function sendOn(socket: net.Socket, chunks: number): Promise<void> {
  for (let i = 0; i < chunks && !socket.destroyed; i++) {
    if (socket.write(CHUNK)) continue;
    await new Promise<void>((resolve) => {
      const go = () => (socket.off('drain', go), socket.off('close', go), resolve());
      socket.on('drain', go).on('close', go);
    });
  }
}

/** Sends a GET on `c`'s connection and resolves once it is answered. */
async function getAgain(c: Client): Promise<void> {
  const next = new Promise<void>((resolve) => {
    const seen = () => c.text().includes('still here') && (c.socket.off('data', seen), resolve());
    c.socket.on('data', seen);
  });
  c.socket.write('GET /again HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await next;
}

describe('drainAfterAnswer', () => {
  it('reads and drops the rest of the body after the answer: the client sends it all, unreset, and its connection serves the next requests', async () => {
    const { port, closeListeners } = await refusingServer({ ms: 60_000 });
    const c = await answered(port);
    expect(c.text()).toMatch(/^HTTP\/1\.1 413 /);
    await sendOn(c.socket, REST);
    // Refused and drained again on the same connection: nothing of either drain is left on the socket.
    await refusedAgain(c);
    await sendOn(c.socket, REST);
    await getAgain(c);
    expect(c.errors).toEqual([]);
    // This test's own listener is the one more.
    expect(closeListeners).toEqual([closeListeners[0], closeListeners[0] + 1]);
    c.socket.destroy();
  });

  it('closes a connection whose client asked for that only once the rest is read: the client sends it all, unreset, and then sees the close', async () => {
    const { port, closed: serverClosed } = await refusingServer({ ms: 60_000 });
    const c = await answered(port, HEAD.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'), CHUNK, true);
    expect(c.text()).toMatch(/^HTTP\/1\.1 413 [^]*\r\nConnection: close\r\n/i);
    await sendOn(c.socket, REST);
    // The server closes once the body is read, and in order: no reset comes after.
    await serverClosed;
    expect(c.errors).toEqual([]);
    const closed = once(c.socket, 'close');
    c.socket.end();
    await closed;
    expect(c.errors).toEqual([]);
  });

  it('keeps a connection whose body ended within the bounds past the time bound', async () => {
    const { port } = await refusingServer({ ms: 200 });
    const c = await answered(port);
    await sendOn(c.socket, REST);
    // Past the time bound of the drained body: the connection is the client's to keep.
    await new Promise((r) => setTimeout(r, 600));
    await getAgain(c);
    expect(c.errors).toEqual([]);
    c.socket.destroy();
  });

  it('drains a chunked rest within the read bound, and cuts one cut finer (1-byte chunks, a read each)', async () => {
    const chunked = 'POST /up HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n';
    const within = await refusingServer({ ms: 60_000, reads: 10_000 });
    const c = await answered(within.port, chunked, '1\r\nx\r\n');
    c.socket.write('1\r\nx\r\n'.repeat(5000) + '0\r\n\r\n');
    await getAgain(c);
    c.socket.destroy();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));

    const past = await refusingServer({ ms: 60_000, reads: 100 });
    const d = await answered(past.port, chunked, '1\r\nx\r\n');
    d.socket.write('1\r\nx\r\n'.repeat(5000));
    await past.closed;
    d.socket.destroy();
  });

  it('cuts the connection of a client that sends more than its byte bound', async () => {
    const { port, closed } = await refusingServer({ ms: 60_000, bytes: 1024 * 1024 });
    const c = await answered(port);
    await sendOn(c.socket, REST);
    await closed;
    if (!c.socket.destroyed) await once(c.socket, 'close');
    expect(c.errors[0]).toMatch(/^(EPIPE|ECONNRESET)$/);
  });

  it('cuts the connection of a client that stops sending once its time bound is over', async () => {
    const { port, closed } = await refusingServer({ ms: 300 });
    const started = Date.now();
    const c = await answered(port);
    await closed;
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    c.socket.destroy();
  });
});
