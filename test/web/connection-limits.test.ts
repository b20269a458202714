// The web's connection bounds on a real HTTP server and real sockets: an idle connection makes room for a new one (its own peer's at the per-address cap, the biggest peer's when the server is full), 429 or 503 with Retry-After only when every candidate is busy, and the slot freed on close.
import http from 'node:http';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { type ConnectionCounts, limitConnections } from '../../src/web/connection-limits.js';
import { DEFAULT_WEB_LIMITS } from '../../src/config/web-limits.js';
import { waitFor } from '../helpers/rq-root.js';

let server: http.Server;
let counts: ConnectionCounts;
let port: number;
const sockets: net.Socket[] = [];
/** How long an evicted half-open connection is held before it is closed: short, the tests wait for it. */
const SLOW_CLOSE_MS = 1000;
/** Responses of /hold requests, answered only when the test lets them go: connections with a request in flight. */
const held: http.ServerResponse[] = [];

beforeEach(async () => {
  server = http.createServer((req, res) => (req.url === '/hold' ? held.push(res) : res.end('served\n')));
  counts = limitConnections(server, { ...DEFAULT_WEB_LIMITS, maxConnections: 4, maxPerAddress: 2 }, silentLogger(), SLOW_CLOSE_MS);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as net.AddressInfo).port;
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  held.splice(0);
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** A connection from `from` (any 127/8 address is this host) that the server has counted or refused, sending `first` (a partial request: a half-open connection). */
async function open(from: string, first = 'GET / HT', allowHalfOpen = false): Promise<net.Socket> {
  const before = counts.open() + counts.refused() + counts.evicted();
  const s = net.connect({ port, host: '127.0.0.1', localAddress: from, allowHalfOpen });
  sockets.push(s);
  s.on('error', () => undefined);
  await new Promise((r) => s.once('connect', r));
  if (first) s.write(first);
  await waitFor(() => counts.open() + counts.refused() + counts.evicted() > before, `the server to see the connection from ${from}`);
  return s;
}

/** A connection from `from` with a request in flight (its response held by the server). */
async function busy(from: string): Promise<net.Socket> {
  const n = held.length;
  const s = await open(from, 'GET /hold HTTP/1.1\r\nHost: x\r\n\r\n');
  await waitFor(() => held.length > n, `the request from ${from} to be read`);
  return s;
}

const closed = (s: net.Socket) => (s.destroyed ? Promise.resolve() : new Promise<void>((r) => s.once('close', () => r())));

/** Sends a request at once, as a client that does not wait to be told anything would, and reads the whole answer. */
function ask(from: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1', localAddress: from }, () => s.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    let out = '';
    s.on('data', (d) => (out += d));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

describe('web connection limits', () => {
  it('an address at its cap makes room from its own oldest idle connection; another address is untouched', async () => {
    const other = await open('127.0.0.3');
    const a1 = await open('127.0.0.2');
    const a2 = await open('127.0.0.2', '');
    expect(await ask('127.0.0.2')).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*served/);
    expect(counts.evicted()).toBe(1);
    expect(counts.refused()).toBe(0);
    // a1 never sent a whole request: it lost its slot at once, but is closed only a while later, without an answer.
    let answer = '';
    a1.on('data', (d) => (answer += d));
    expect(a1.destroyed).toBe(false);
    await closed(a1);
    expect(answer).toBe('');
    expect(a2.destroyed || other.destroyed).toBe(false);
  });

  it('answers 429 when every connection of the address is busy, and serves another address', async () => {
    await busy('127.0.0.2');
    await busy('127.0.0.2');
    const tooMany = await ask('127.0.0.2');
    expect(tooMany).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    expect(tooMany).toContain('\r\nRetry-After: 5\r\n');
    expect(tooMany).toContain('\r\nConnection: close\r\n');
    expect(tooMany).toMatch(/429 - 2 connections are open from 127\.0\.0\.2, the most one address may hold \(max_connections_per_address/);
    expect(await ask('127.0.0.3')).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*served/);
    expect(counts.evicted()).toBe(0);
  });

  it('a full server evicts the oldest idle connection of the address holding the most, not a smaller one', async () => {
    const small = await open('127.0.0.5');
    const [big1, big2] = [await open('127.0.0.2'), await open('127.0.0.2')];
    const mid = await open('127.0.0.3');
    expect(counts.open()).toBe(4);
    expect(await ask('127.0.0.4')).toMatch(/^HTTP\/1\.1 200 OK/);
    await closed(big1);
    expect([small, big2, mid].map((s) => s.destroyed)).toEqual([false, false, false]);
    // Full again with 127.0.0.2 holding 1, as each other address: the next newcomer takes the connection idle longest (small's).
    await waitFor(() => counts.open() === 3, 'the answered connection to be let go');
    await open('127.0.0.7');
    expect(await ask('127.0.0.6')).toMatch(/^HTTP\/1\.1 200 OK/);
    await closed(small);
  });

  it('answers 503 when the server is full and nothing it may evict is idle, and serves again once a slot is free', async () => {
    const b1 = await busy('127.0.0.2');
    await busy('127.0.0.2');
    await busy('127.0.0.3');
    // Idle, but holding no more than the newcomer's address (127.0.0.3 holds 1 too): not 127.0.0.3's to take.
    const idle = await open('127.0.0.4');
    const full = await ask('127.0.0.3');
    expect(full).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(full).toContain('\r\nRetry-After: 5\r\n');
    expect(full).toMatch(/503 - 4 connections are open, the most this server serves \(max_connections/);
    expect(idle.destroyed).toBe(false);

    b1.destroy();
    await waitFor(() => counts.open() === 3, 'the closed connection to be let go');
    expect(await ask('127.0.0.3')).toMatch(/^HTTP\/1\.1 200 OK/);
  });

  it('a connection is idle again once its request is answered, and a long response (a stream) is never evicted', async () => {
    const stream = await busy('127.0.0.2');
    held[0].write('streaming\n');
    const kept = await open('127.0.0.2', 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => kept.once('data', r));
    // `kept` was answered and is idle on keep-alive: it goes, the stream stays.
    expect(await ask('127.0.0.2')).toMatch(/^HTTP\/1\.1 200 OK/);
    await closed(kept);
    expect(stream.destroyed).toBe(false);
  });

  it('lets a refused connection go even when its client never closes', async () => {
    await busy('127.0.0.2');
    await busy('127.0.0.2');
    // Half-open allowed: the client does not close its side when the server ends its own.
    const s = await open('127.0.0.2', '', true);
    let answer = '';
    s.on('data', (d) => (answer += d));
    await new Promise((r) => s.once('end', r));
    expect(answer).toMatch(/^HTTP\/1\.1 429 /);
    // The server lets its socket go after the linger, without the client doing anything.
    const sockets = () => new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    expect(await sockets()).toBe(3);
    await waitFor(async () => (await sockets()) === 2, 'the refused socket to be let go', 5000);
    expect(counts.open()).toBe(2);
  });
});
