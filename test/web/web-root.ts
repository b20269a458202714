// Web test harness: a temp root with queues, a real rq-mgr (which starts the web process), and HTTP helpers.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type QueueDef, addQueue, freePort, makeRoot, waitFor } from '../helpers/rq-root.js';
import { MgrProc } from '../helpers/mgr-proc.js';

export const TAIL_SH = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'tail.sh');
export const execFileP = promisify(execFile);

export { freePort };

export interface WebRootOptions {
  config?: Record<string, unknown>;
  /** Runs in the new root before rq-mgr starts; what it returns is merged into config.json. */
  setup?: (root: string) => Promise<Record<string, unknown> | void>;
  queues?: Record<string, QueueDef>;
  /** More environment for rq-mgr, which its queues inherit. */
  env?: NodeJS.ProcessEnv;
}

export interface WebRoot {
  root: string;
  port: number;
  /** http://127.0.0.1:<port><relative_root without trailing slash> */
  base: string;
  origin: string;
  mgr: MgrProc;
  stop(): Promise<void>;
}

/** Starts rq-mgr in a fresh root and waits until the web process answers /healthz. */
export async function startWebRoot(opts: WebRootOptions = {}): Promise<WebRoot> {
  const port = await freePort();
  const t = await makeRoot({ port });
  const cfgFile = path.join(t.root, 'config', 'config.json');
  const extra = (await opts.setup?.(t.root)) ?? {};
  const config = { ...JSON.parse(await fs.readFile(cfgFile, 'utf8')), ...opts.config, ...extra };
  await fs.writeFile(cfgFile, JSON.stringify(config) + '\n');
  for (const [name, def] of Object.entries(opts.queues ?? { test: {} })) await addQueue(t.root, name, def);
  const mgr = await MgrProc.start(t.root, { env: opts.env });
  const prefix = typeof config.relative_root === 'string' ? config.relative_root.replace(/\/+$/, '') : '';
  const origin = `http://127.0.0.1:${port}`;
  const base = origin + prefix;
  const auth = config.basic_auth as { users: Record<string, string> } | undefined;
  const headers: Record<string, string> = {};
  if (auth) {
    const [u, p] = Object.entries(auth.users)[0];
    headers.authorization = `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
  }
  try {
    await waitFor(async () => (await fetch(`${base}/healthz`, { headers })).status === 200, 'web process healthy', 20_000, 100);
  } catch (err) {
    const log = await fs.readFile(path.join(t.root, 'log', 'mgr-test.log'), 'utf8').catch(() => '');
    await mgr.stop();
    throw new Error(`${(err as Error).message}\n--- rq-mgr log ---\n${log.slice(-4000)}`, { cause: err });
  }
  return {
    root: t.root,
    port,
    base,
    origin,
    mgr,
    async stop() {
      await mgr.stop();
      await t.cleanup();
    },
  };
}

/** Sends a message over HTTP (x_format json) and returns its short id. */
export async function send(base: string, queue: string, fields: Record<string, unknown>, init: RequestInit = {}): Promise<string> {
  const res = await fetch(`${base}/q/${queue}/new_message`, {
    method: 'POST',
    body: new URLSearchParams({ mesg: JSON.stringify({ dest: queue, ...fields }) }),
    ...init,
  });
  const body = (await res.json()) as [string, string];
  if (body[0] !== 'ok') throw new Error(`new_message: ${JSON.stringify(body)}`);
  return body[1].split('/').pop()!;
}

export async function stateOf(base: string, queue: string, id: string, init: RequestInit = {}): Promise<string> {
  const res = await fetch(`${base}/q/${queue}/${id}/state.json`, init);
  return res.status === 200 ? ((await res.json()) as string[])[0] : `http ${res.status}`;
}

export async function waitState(base: string, queue: string, id: string, states: string[], init: RequestInit = {}, timeoutMs = 20_000): Promise<string> {
  return waitFor(
    async () => {
      const s = await stateOf(base, queue, id, init);
      return states.includes(s) ? s : false;
    },
    `${queue}/${id} to reach ${states.join('|')}`,
    timeoutMs,
    50,
  );
}

/** POST a urlencoded form without following redirects. */
export function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body: new URLSearchParams(form), redirect: 'manual', headers });
}

/** The cookie header to send back after a response that set cookies. */
export function cookiesOf(res: Response): string {
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}

/** Every path and size under a directory, to prove a request changed nothing. */
/** `queues/<q>/stats`: statistics are written on their own 10 s clock (rq-beyond §B15.2), not state a request may change; snapshots leave them out. */
export const STATS_DIR = /\/queues\/[^/]+\/stats$/;

export async function treeSnapshot(dir: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(d: string) {
    for (const e of await fs.readdir(d, { withFileTypes: true }).catch(() => [])) {
      const p = path.join(d, e.name);
      // Sockets, pid files and logs change on their own; messages and configs must not.
      if (e.name.endsWith('.sock') || e.name.endsWith('.pid') || e.name === 'log' || STATS_DIR.test(p)) continue;
      if (e.isDirectory()) {
        out.push(`${path.relative(dir, p)}/`);
        await walk(p);
      } else {
        const st = await fs.lstat(p);
        out.push(`${path.relative(dir, p)} ${st.size}`);
      }
    }
  }
  await walk(dir);
  return out.sort();
}

/** A GET sent as given (fetch would set its own Host and re-encode the path): its status, headers and body. */
export function rawGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      })
      .on('error', reject);
  });
}

/** `head` (and any body after it) sent as it is on a connection of its own: all the server answers until it closes. */
export function rawExchange(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(head));
    let buf = '';
    s.on('data', (d) => (buf += d));
    s.on('end', () => resolve(buf));
    s.on('error', reject);
  });
}
