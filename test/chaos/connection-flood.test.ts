// Connection floods: idle keep-alive connections, SSE log tails, a slow drip and a silent socket against the web, then held
// connections against a queue socket; meanwhile a normal client keeps creating messages. The web's memory and sockets stay bounded,
// the excess takes the place of idle connections (503/429 with Retry-After only where none is idle; a busy reply on the queue
// socket), the normal client keeps being served, and every message it was told about exists. CI sizes by default; RQ_CHAOS_BIG=1
// for 5,000 idle connections and 2,000 tails.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { queueCommand } from '../../src/ipc/rq1.js';
import { DEFAULT_MAX_SOCKET_CONNECTIONS } from '../../src/ipc/socket-server.js';
import { DEFAULT_WEB_LIMITS } from '../../src/config/web-limits.js';
import { waitFor } from '../helpers/rq-root.js';
import { type WebRoot, send, startWebRoot, waitState } from '../web/web-root.js';

const BIG = process.env.RQ_CHAOS_BIG === '1';
const SIZE = BIG ? { idle: 5000, tails: 2000, tailMessages: 20, queueConns: 5000 } : { idle: 1000, tails: 300, tailMessages: 2, queueConns: 600 };
const L = DEFAULT_WEB_LIMITS;
/** Short, so the slow drip is cut within the test; idle keep-alive connections are held for the whole test instead. */
const HEADERS_TIMEOUT_S = 3;
/**
 * However big the flood, the web holds at most max_connections (1024) connections, of which at most
 * max_sse_streams are streams. Measured: a log tail ~50 KiB (its watches, file handle, hub listener
 * and stream buffers), an idle keep-alive connection ~25 KiB; so 64 KiB for each of 1024, plus 32 MiB
 * of garbage-collector headroom. Measured growth: +31 MiB at CI sizes, +52 MiB at RQ_CHAOS_BIG
 * (2,000 tails had grown the web by 248 MB before the limits).
 */
const RSS_GROWTH_BOUND_MIB = (L.maxConnections * 64) / 1024 + 32;
const FLOOD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'flood.mjs');

interface BatchResult {
  counts: Record<string, number>;
  retryAfterMissing: number;
  texts: string[];
}

/** The flooding client, a child with its own fd limit (the test runner's may be 1024). */
class Flooder {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting = new Map<string, (r: BatchResult) => void>();
  private next = 0;
  constructor() {
    this.child = spawn('bash', ['-c', 'ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec node "$0"', FLOOD]);
    readline.createInterface({ input: this.child.stdout }).on('line', (line) => {
      const r = JSON.parse(line) as BatchResult & { id: string };
      this.waiting.get(r.id)?.(r);
    });
  }
  private ask(cmd: Record<string, unknown>): Promise<BatchResult> & { id: string } {
    const id = `b${this.next++}`;
    const p = new Promise<BatchResult>((r) => this.waiting.set(id, r)) as Promise<BatchResult> & { id: string };
    p.id = id;
    this.child.stdin.write(`${JSON.stringify({ ...cmd, id })}\n`);
    return p;
  }
  http(port: number, requests: { from: string; path: string; sse?: boolean }[]) {
    return this.ask({ cmd: 'open', kind: 'http', port, requests });
  }
  unix(sock: string, n: number) {
    return this.ask({ cmd: 'open', kind: 'unix', path: sock, n });
  }
  release(batch: string) {
    return this.ask({ cmd: 'release', batch });
  }
  stop(): Promise<void> {
    const gone = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.stdin.end();
    return gone;
  }
}

/** A well-behaved client from 127.0.0.1 on one keep-alive connection, creating messages until told to stop. */
class NormalClient {
  readonly acknowledged: string[] = [];
  readonly refusals: string[] = [];
  readonly dropped: string[] = [];
  private stopped = false;
  private loop: Promise<void> | null = null;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  constructor(private readonly port: number) {}

  private create(n: number): Promise<void> {
    const body = new URLSearchParams({ mesg: JSON.stringify({ dest: 'test', param1: `normal ${n}` }), x_format: 'json' }).toString();
    return new Promise((resolve) => {
      const req = http.request({ host: '127.0.0.1', port: this.port, localAddress: '127.0.0.1', agent: this.agent, method: 'POST', path: '/q/test/new_message', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          const id = res.statusCode === 200 ? /\["ok","[^"]*\/([0-9.]+)"\]/.exec(text)?.[1] : undefined;
          if (id) this.acknowledged.push(id);
          else this.refusals.push(`${res.statusCode} retry-after=${res.headers['retry-after'] ?? '-'} ${text.slice(0, 120)}`);
          resolve();
        });
      });
      req.on('error', (err) => {
        this.dropped.push(err.message);
        resolve();
      });
      req.end(body);
    });
  }

  start(): void {
    this.loop = (async () => {
      for (let n = 0; !this.stopped; n++) {
        const before = this.acknowledged.length;
        await this.create(n);
        // A refusal is retried a little later, as Retry-After asks (shortened: the test is about being served, not waiting).
        if (this.acknowledged.length === before) await new Promise((r) => setTimeout(r, 50));
      }
    })();
  }

  /** Waits until `n` more creates than now have been acknowledged: the client is being served. */
  async served(n: number, label: string): Promise<void> {
    const target = this.acknowledged.length + n;
    await waitFor(() => this.acknowledged.length >= target, `the normal client to be served ${label} (refusals: ${this.refusals.slice(-2).join(' | ')})`, 30_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    this.agent.destroy();
  }
}

/** How many connections of a batch ended as `kind` (an HTTP status, pong, refused). */
const n = (b: BatchResult, kind: string): number => b.counts[kind] ?? 0;

/**
 * How a connection of the flood can end: served, refused with Retry-After when nothing could make
 * room for it, or evicted before its request was read (flood.mjs's client writes its request only
 * when its own loop sees the connect, and one that is late is half-open to the server), closed
 * without an answer, reset if its request came while it waited to be closed, or answered 408 by the
 * headers timeout when its request was still unread after it (a loaded machine: the flood's client and
 * the web share two cores).
 */
const OUTCOMES = ['200', '408', '429', '503', 'closed without an answer', 'error ECONNRESET'];
const outcomes = (b: BatchResult): number => OUTCOMES.reduce((sum, k) => sum + n(b, k), 0);
/**
 * TCP sockets the web may hold at once: max_connections counted, as many evicted ones held before
 * they are closed (web/slow-close.ts), and a few of its own (queue sockets, event feeds).
 */
const SOCKETS_BOUND = 2 * L.maxConnections + 64;

/** Sockets the web process has open now (/proc/<pid>/fd). */
async function webSockets(pid: number): Promise<number> {
  const fds = await fs.readdir(`/proc/${pid}/fd`);
  const links = await Promise.all(fds.map((fd) => fs.readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  return links.filter((l) => l.startsWith('socket:')).length;
}

async function rssKiB(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]);
}

/** A raw connection that sends `drip` one byte every 100 ms (or nothing); resolves with what it got and when it was closed. */
function slowClient(port: number, from: string, drip: string): Promise<{ answer: string; ms: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const s = net.connect({ port, host: '127.0.0.1', localAddress: from });
    let i = 0;
    const timer = drip ? setInterval(() => i < drip.length && s.write(drip[i++]), 100) : null;
    let answer = '';
    s.on('data', (d) => (answer += d));
    s.on('error', () => undefined);
    s.on('close', () => {
      if (timer) clearInterval(timer);
      resolve({ answer, ms: Date.now() - t0 });
    });
  });
}

let w: WebRoot;
let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-flood-'));
  const slow = path.join(dir, 'slow.sh');
  // Writes a line to its log, then runs until rq-mgr stops it: a message whose log tails stay open.
  await fs.writeFile(slow, '#!/bin/bash\necho "running $RQ_MSG_ID"\nexec sleep 600\n', { mode: 0o755 });
  w = await startWebRoot({ config: { headers_timeout_s: HEADERS_TIMEOUT_S, keep_alive_timeout_s: 600 }, queues: { test: {}, slow: { script: slow, num_workers: SIZE.tailMessages } } });
}, 60_000);
afterAll(async () => {
  await w?.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

describe(`connection flood (${BIG ? 'RQ_CHAOS_BIG' : 'CI'} sizes: ${JSON.stringify(SIZE)})`, () => {
  it('keeps the web bounded and serving, makes room from idle connections or refuses with Retry-After, and orphans no message', { timeout: BIG ? 600_000 : 180_000 }, async () => {
    const webPid = (await w.mgr.cmd('status'))[1]['[web]'].pid as number;
    expect(Number.isInteger(webPid) && webPid > 1).toBe(true);
    const tailIds: string[] = [];
    for (let i = 0; i < SIZE.tailMessages; i++) tailIds.push(await send(w.base, 'slow', {}));
    for (const id of tailIds) await waitState(w.base, 'slow', id, ['run']);
    const normal = new NormalClient(w.port);
    normal.start();
    await normal.served(5, 'before the flood');
    const baseline = await rssKiB(webPid);
    let peak = baseline;
    const sample = async () => (peak = Math.max(peak, await rssKiB(webPid)));
    const flood = new Flooder();
    try {
      const drip = slowClient(w.port, '127.0.0.3', `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: ${'d'.repeat(200)}\r\n\r\n`);
      const silent = slowClient(w.port, '127.0.0.4', '');

      // 1. SSE log tails, 50 per client address, spread over the running messages.
      const tails = flood.http(
        w.port,
        Array.from({ length: SIZE.tails }, (_, i) => ({ from: `127.0.2.${1 + Math.floor(i / 50)}`, path: `/q/slow/${tailIds[i % tailIds.length]}/log/stdio.log/events`, sse: true })),
      );
      const t = await tails;
      const tailsServed = Math.min(L.maxSseStreams, SIZE.tailMessages * Math.min(L.maxTailsPerMessage, Math.ceil(SIZE.tails / SIZE.tailMessages)));
      expect(n(t, '200')).toBeLessThanOrEqual(tailsServed);
      // A refused tail's connection may still be counted for a moment when the next arrives: at most a few are refused at the door instead.
      expect(n(t, '200')).toBeGreaterThanOrEqual(tailsServed * 0.9);
      expect(n(t, '503')).toBe(SIZE.tails - n(t, '200'));
      expect(t.retryAfterMissing).toBe(0);
      await sample();
      await normal.served(3, 'with the tails open');

      // 2. One address opens far more idle keep-alive connections than it may hold: each past its cap takes the place of
      // its oldest idle one (or is refused 429 while all of them are busy or just accepted); the connections it holds never
      // pass its cap, and the web's sockets stay bounded.
      const one = await flood.http(w.port, Array.from({ length: SIZE.idle }, () => ({ from: '127.0.0.2', path: '/favicon.ico' })));
      expect(outcomes(one), JSON.stringify(one.counts)).toBe(SIZE.idle);
      expect(n(one, '200')).toBeGreaterThanOrEqual(L.maxPerAddress);
      expect(n(one, '503')).toBe(0);
      expect(one.retryAfterMissing).toBe(0);
      expect(await webSockets(webPid)).toBeLessThanOrEqual(SOCKETS_BOUND);
      await sample();
      await normal.served(3, 'with one address flooding');

      // 3. Many addresses, each under its own limit, together past max_connections: idle connections of the address holding
      // the most make room (127.0.0.2's first), so most are served; the tails are busy and stay.
      const many = await flood.http(w.port, Array.from({ length: SIZE.idle }, (_, i) => ({ from: `127.0.1.${1 + Math.floor(i / 100)}`, path: '/favicon.ico' })));
      expect(outcomes(many), JSON.stringify(many.counts)).toBe(SIZE.idle);
      expect(n(many, '200')).toBeGreaterThanOrEqual(SIZE.idle / 2);
      expect(many.retryAfterMissing).toBe(0);
      expect(await webSockets(webPid)).toBeLessThanOrEqual(SOCKETS_BOUND);
      await sample();
      // Its one connection is the smallest holding of any address: the flood's own idle connections make room, never it.
      await normal.served(3, 'with the server full');
      await sample();

      // The slow drip and the silent socket were cut by the headers timeout (checked every second), answered 408.
      for (const c of [await drip, await silent]) {
        expect(c.answer).toMatch(/^HTTP\/1\.1 408 /);
        expect(c.ms).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_S * 1000 - 100);
        expect(c.ms).toBeLessThan(HEADERS_TIMEOUT_S * 1000 + 5000);
      }
      for (const b of [tails, one, many] as unknown as { id: string }[]) await flood.release(b.id);
      await normal.served(3, 'after the web flood');

      // 4. The queue socket: held connections past max_socket_connections get the busy reply; a create is still answered.
      const sock = queuePaths(w.root, 'test').sock;
      const qflood = flood.unix(sock, SIZE.queueConns);
      const q = await qflood;
      expect(n(q, 'pong')).toBeLessThanOrEqual(DEFAULT_MAX_SOCKET_CONNECTIONS);
      expect(n(q, 'refused')).toBe(SIZE.queueConns - n(q, 'pong'));
      expect(q.texts[0]).toMatch(/connections are open on .*queue\.sock, the most it serves \(max_socket_connections/);
      const during = (await queueCommand(sock, 'create_message', { dest: 'test', param1: 'during the socket flood' }, { timeoutMs: 10_000 })) as [string, string];
      expect(during[0]).toBe('fail');
      expect(during[1]).toMatch(/max_socket_connections/);
      // The web's connection to the queue was open before: its creates keep going through.
      await normal.served(3, 'with the queue socket full');
      await flood.release((qflood as unknown as { id: string }).id);
      const after = (await waitFor(async () => {
        const r = (await queueCommand(sock, 'create_message', { dest: 'test', param1: 'after the socket flood' }, { timeoutMs: 10_000 })) as [string, string];
        return r[0] === 'ok' ? r : false;
      }, 'a create once the held connections are gone')) as [string, string];
      expect(after[1]).toMatch(/\/test\//);
    } finally {
      await normal.stop();
      await flood.stop();
    }

    expect(normal.dropped).toEqual([]);
    for (const r of normal.refusals) expect(r).toMatch(/^(429|503) retry-after=\d+ /);
    for (const id of normal.acknowledged) expect((await queueCommand(queuePaths(w.root, 'test').sock, 'get_message_status', { msg_id: id }, { timeoutMs: 10_000 }) as unknown[])[0], id).toBe('ok');
    const grownMiB = (peak - baseline) / 1024;
    console.log(`web RSS: baseline ${(baseline / 1024).toFixed(1)} MiB, peak ${(peak / 1024).toFixed(1)} MiB (+${grownMiB.toFixed(1)} MiB); normal client: ${normal.acknowledged.length} created, ${normal.refusals.length} refused`);
    expect(grownMiB).toBeLessThan(RSS_GROWTH_BOUND_MIB);
  });
});
