// Shared pieces of the web benches: a real rq-mgr with its web process, keep-alive HTTP, the web pid and its RSS.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { type WebRoot, startWebRoot } from '../test/web/web-root.js';
import type { QueueDef } from '../test/helpers/rq-root.js';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DONE_SCRIPT, nowMs, slice } from './lib.js';

export { slice };

export { cpuMs, loadavg, median, nowMs, quantile, round, rssMb } from './lib.js';

/** Bare spawn → first act of `script` (it prints `done $EPOCHREALTIME` on fd 3), as bench/dispatch.ts measures it. */
export async function rawSpawnLatency(script: string, cwd: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = nowMs();
    const started = await new Promise<number>((resolve, reject) => {
      const c = spawn(script, [], { cwd, stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], detached: true });
      let line = '';
      c.stdio[3]!.on('data', (d) => (line += d));
      c.on('error', reject);
      c.on('close', () => resolve(Number(line.trim().split(' ')[1]) * 1000));
    });
    out.push(started - t0);
  }
  return out;
}

/** rq-mgr (which starts the web process) in a temp root with the given queues; needs a current `npm run build`. */
export function webRoot(queues: Record<string, QueueDef>, config?: Record<string, unknown>): Promise<WebRoot> {
  return startWebRoot({ queues, config });
}

/** The fields the HTTP enqueue benches send (besides dest). */
export const BENCH_FIELDS = { src: 'bench', param1: 'hello', param2: 'a parameter of modest size' };

/** A temp dir holding a `done ok` script, and rq-mgr with its web process serving queue `q`, which runs it. */
export async function webRootRunningDone(q: string): Promise<{ dir: string; w: WebRoot }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
  const script = path.join(dir, 'run.sh');
  await fs.writeFile(script, DONE_SCRIPT, { mode: 0o755 });
  return { dir, w: await webRoot({ [q]: { script } }) };
}

/** The web process's pid, as rq-mgr reports it. */
export async function webPid(w: WebRoot): Promise<number> {
  const r = (await w.mgr.cmd('status')) as [string, Record<string, { pid: number | null }>];
  const pid = r[1]['[web]']?.pid;
  if (!pid) throw new Error(`rq-mgr reports no web process: ${JSON.stringify(r)}`);
  return pid;
}

export interface HttpReply {
  status: number;
  body: string;
}

/**
 * A keep-alive client: at most `sockets` connections, reused across requests, like a relay or a script with an agent.
 * With `keepAlive` false, every request opens its own connection, like curl in a shell loop.
 */
export function httpClient(base: string, sockets: number, keepAlive = true) {
  const agent = new http.Agent({ keepAlive, maxSockets: sockets });
  const u = new URL(base);
  function send(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<HttpReply> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          agent,
          host: u.hostname,
          port: u.port,
          method,
          path: u.pathname.replace(/\/$/, '') + path,
          headers:
            body === undefined ? headers : { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }
  return {
    get: (path: string) => send('GET', path),
    post: (path: string, body: string) => send('POST', path, body),
    close: () => agent.destroy(),
  };
}

type HttpClient = ReturnType<typeof httpClient>;

/** Sends a message over HTTP; returns its short id. */
export async function send(client: HttpClient, queue: string, fields: Record<string, unknown> = {}): Promise<string> {
  const r = await client.post(`/q/${queue}/new_message`, newMessageBody(queue, fields));
  if (r.status !== 200 || !r.body.startsWith('["ok"')) throw new Error(`new_message: ${r.status} ${r.body}`);
  return (JSON.parse(r.body) as [string, string])[1].split('/').pop()!;
}

export async function waitDone(client: HttpClient, queue: string, id: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await client.get(`/q/${queue}/${id}/state.json`)).body !== '["done"]') {
    if (Date.now() > deadline) throw new Error(`${queue}/${id} not done after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The body of a classic JSON-mode enqueue: `mesg=<json>` (x_format defaults to json, _method to commit). */
export function newMessageBody(queue: string, fields: Record<string, unknown> = {}): string {
  return new URLSearchParams({ x_format: 'json', mesg: JSON.stringify({ dest: queue, ...fields }) }).toString();
}

/**
 * Rates of two ops in alternating short slices (A B A B …, `seconds` each in total), so load from
 * other processes on the shared 2-core machine hits both sides alike.
 */
export async function paired(
  a: () => Promise<void>,
  b: () => Promise<void>,
  concurrency: number,
  seconds: number,
  slices = 6,
): Promise<{ a: { ops: number; rate: number }; b: { ops: number; rate: number } }> {
  const tot = [
    { ops: 0, s: 0 },
    { ops: 0, s: 0 },
  ];
  for (let i = 0; i < slices; i++) {
    for (const [k, op] of [a, b].entries()) {
      const r = await slice(op, concurrency, seconds / slices);
      tot[k].ops += r.ops;
      tot[k].s += r.s;
    }
  }
  return { a: { ops: tot[0].ops, rate: tot[0].ops / tot[0].s }, b: { ops: tot[1].ops, rate: tot[1].ops / tot[1].s } };
}
