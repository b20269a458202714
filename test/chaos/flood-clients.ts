// The flood test's clients and probes: the flooding child (flood.mjs), a well-behaved client, a slow drip, and the web process's sockets and memory read from /proc.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DEFAULT_WEB_LIMITS } from '../../src/config/web-limits.js';
import { waitFor } from '../helpers/rq-root.js';

const L = DEFAULT_WEB_LIMITS;
const FLOOD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'flood.mjs');

export interface BatchResult {
  counts: Record<string, number>;
  retryAfterMissing: number;
  texts: string[];
}

/** The flooding client, a child with its own fd limit (the test runner's may be 1024). */
export class Flooder {
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
export class NormalClient {
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
      const req = http.request(
        {
          host: '127.0.0.1',
          port: this.port,
          localAddress: '127.0.0.1',
          agent: this.agent,
          method: 'POST',
          path: '/q/test/new_message',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => {
            const id = res.statusCode === 200 ? /\["ok","[^"]*\/([0-9.]+)"\]/.exec(text)?.[1] : undefined;
            if (id) this.acknowledged.push(id);
            else this.refusals.push(`${res.statusCode} retry-after=${res.headers['retry-after'] ?? '-'} ${text.slice(0, 120)}`);
            resolve();
          });
        },
      );
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
    await waitFor(
      () => this.acknowledged.length >= target,
      `the normal client to be served ${label} (refusals: ${this.refusals.slice(-2).join(' | ')})`,
      30_000,
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    this.agent.destroy();
  }
}

/** How many connections of a batch ended as `kind` (an HTTP status, pong, refused). */
export const n = (b: BatchResult, kind: string): number => b.counts[kind] ?? 0;

/**
 * How a connection of the flood can end: served, refused with Retry-After when nothing could make
 * room for it, or evicted before its request was read (flood.mjs's client writes its request only
 * when its own loop sees the connect, and one that is late is half-open to the server), closed
 * without an answer, reset if its request came while it waited to be closed, or answered 408 by the
 * headers timeout when its request was still unread after it (a loaded machine: the flood's client and
 * the web share two cores).
 */
export const OUTCOMES = ['200', '408', '429', '503', 'closed without an answer', 'error ECONNRESET'];
export const outcomes = (b: BatchResult): number => OUTCOMES.reduce((sum, k) => sum + n(b, k), 0);
/**
 * TCP sockets the web may hold at once: max_connections counted, as many evicted ones held before
 * they are closed (web/slow-close.ts), and a few of its own (queue sockets, event feeds).
 */
export const SOCKETS_BOUND = 2 * L.maxConnections + 64;

/** Sockets the web process has open now (/proc/<pid>/fd). */
export async function webSockets(pid: number): Promise<number> {
  const fds = await fs.readdir(`/proc/${pid}/fd`);
  const links = await Promise.all(fds.map((fd) => fs.readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
  return links.filter((l) => l.startsWith('socket:')).length;
}

export async function rssKiB(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]);
}

/** A raw connection that sends `drip` one byte every 100 ms (or nothing); resolves with what it got and when it was closed. */
export function slowClient(port: number, from: string, drip: string): Promise<{ answer: string; ms: number }> {
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
