// The web's connection bounds on a real HTTP server and real sockets: 429 past the per-address limit, 503 past the total, each with Retry-After, and the slot freed on close.
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

beforeEach(async () => {
  server = http.createServer((_req, res) => res.end('served\n'));
  counts = limitConnections(server, { ...DEFAULT_WEB_LIMITS, maxConnections: 4, maxPerAddress: 2 }, silentLogger());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as net.AddressInfo).port;
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** A connection from `from` (any 127/8 address is this host) that the server has counted or refused. */
async function hold(from: string, allowHalfOpen = false): Promise<net.Socket> {
  const before = counts.open() + counts.refused();
  const s = net.connect({ port, host: '127.0.0.1', localAddress: from, allowHalfOpen });
  sockets.push(s);
  await new Promise((r) => s.once('connect', r));
  await waitFor(() => counts.open() + counts.refused() > before, `the server to see the connection from ${from}`);
  return s;
}

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
  it('answers 429 past the per-address limit and 503 past the total, with Retry-After, and serves again once a slot is free', async () => {
    const a1 = await hold('127.0.0.2');
    await hold('127.0.0.2');
    const tooMany = await ask('127.0.0.2');
    expect(tooMany).toMatch(/^HTTP\/1\.1 429 Too Many Requests\r\n/);
    expect(tooMany).toContain('\r\nRetry-After: 5\r\n');
    expect(tooMany).toContain('\r\nConnection: close\r\n');
    expect(tooMany).toMatch(/429 - 2 connections are open from 127\.0\.0\.2, the most one address may hold \(max_connections_per_address/);
    // Another address is still served.
    expect(await ask('127.0.0.3')).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*served/);

    await hold('127.0.0.3');
    await hold('127.0.0.3');
    const full = await ask('127.0.0.4');
    expect(full).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(full).toContain('\r\nRetry-After: 5\r\n');
    expect(full).toMatch(/503 - 4 connections are open, the most this server serves \(max_connections/);

    a1.destroy();
    await waitFor(() => counts.open() === 3, 'the closed connection to be let go');
    expect(await ask('127.0.0.4')).toMatch(/^HTTP\/1\.1 200 OK/);
  });

  it('lets a refused connection go even when its client never closes', async () => {
    await hold('127.0.0.2');
    await hold('127.0.0.2');
    // Half-open allowed: the client does not close its side when the server ends its own.
    const s = await hold('127.0.0.2', true);
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
