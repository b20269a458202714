// A scripted far host for relayMessage in-process: an HTTP server answering by route, every request recorded, and a message dir with its job/.
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { HttpClient } from '../../src/script-kit/http-client.js';
import { type RelayOutcome, relayMessage } from '../../src/relay/relay.js';

export interface FarCall {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
export type Handler = (req: FarCall) => { status?: number; body: string } | 'hangup';
export type Route = [RegExp, Handler];

export const FAR = (id: string) => `http://far.example:1/q/test/${id}`;
export const ID1 = '20261121.1643.46.613.1';
export const ID2 = '20261121.1643.46.613.2';

export const prepOk = (id: string): Route => [/^POST \/q\/test\/new_message$/, () => ({ body: JSON.stringify(['ok', FAR(id)]) })];
export const commit = (reply: unknown): Route => [/^POST \/q\/test\/[\d.]+$/, () => ({ body: JSON.stringify(reply) })];
export const queueStatus = (status: string): Route => [/^GET \/q\/test\.json$/, () => ({ body: `{"status":"${status}"\n,"uptime":1}\n` })];
export const state = (id: string, reply: { status?: number; body: string }): Route => [
  new RegExp(`^GET /q/test/${id.replace(/\./g, '\\.')}/state\\.json$`),
  () => reply,
];

export interface FarHost {
  routes: Route[];
  /** `METHOD url` of every request, in order. */
  calls: string[];
  requests: FarCall[];
  msgDir: string;
  jobDir: string;
  port: number;
  server: http.Server;
  relay(opts?: { now?: () => number; askOnly?: string }): Promise<{ outcome: RelayOutcome; logs: string[]; progress: string[] }>;
}

/** Registers the hooks of a test file: a fresh far host, message dir (msg file, empty job/) and routes for each test. */
export function scriptedFarHost(): FarHost {
  const h = { routes: [], calls: [], requests: [] } as unknown as FarHost;
  beforeEach(async () => {
    h.routes = [];
    h.calls = [];
    h.requests = [];
    h.msgDir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-relay-far-'));
    h.jobDir = path.join(h.msgDir, 'job');
    await fs.mkdir(h.jobDir);
    await fs.writeFile(
      path.join(h.msgDir, 'msg'),
      JSON.stringify({ msg_id: 'x', dest: 'http://h/q/test', count: 0, max_count: 15, orig_msg_id: 'http://a/q/relay/x', src: 'unit' }),
    );
    h.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('latin1')));
      req.on('end', () => {
        const call = { method: req.method!, url: req.url!, headers: req.headers, body };
        h.calls.push(`${call.method} ${call.url}`);
        h.requests.push(call);
        const route = h.routes.find(([re]) => re.test(`${call.method} ${call.url}`));
        const out = route ? route[1](call) : { status: 404, body: '<h2>Not Found</h2>' };
        if (out === 'hangup') return req.socket.destroy();
        res.writeHead(out.status ?? 200, { 'content-type': 'application/json' });
        res.end(out.body);
      });
    });
    await new Promise<void>((r) => h.server.listen(0, '127.0.0.1', r));
    h.port = (h.server.address() as net.AddressInfo).port;
  });
  afterEach(async () => {
    await new Promise((r) => h.server.close(r));
    await fs.rm(h.msgDir, { recursive: true, force: true });
  });
  h.relay = async (opts = {}) => {
    const logs: string[] = [];
    const progress: string[] = [];
    const client = new HttpClient();
    try {
      const outcome = await relayMessage(
        { jobDir: h.jobDir, target: { base: `http://127.0.0.1:${h.port}`, queue: 'test' }, ...(opts.askOnly === undefined ? {} : { askOnly: opts.askOnly }) },
        { http: client, log: (t) => logs.push(t), progress: (t) => progress.push(t), now: opts.now },
      );
      return { outcome, logs, progress };
    } finally {
      client.close();
    }
  };
  return h;
}
