// HTTP enqueue at 16 clients against the disk: POST /q/<q>/new_message (durable commit) over keep-alive
// connections and over one connection per request, beside three floors in alternating slices of the same run:
// mkdir + write of a msg of the real size + rename with no fsync; the same plus a group-committed fdatasync of a
// journal append (what any durable enqueue at 16 in flight could do on this disk); and the HTTP transport with no
// work (bench/fixtures/http-transport-floor.mjs: node:http relaying each body over a Unix socket to a second
// process), what the same two cores give the same HTTP client and rq's two-process shape before any of rq's work.
// CPU per request of each process (from /proc, all threads and the kernel's share) says where the time goes.
// The queue is paused: nothing runs.
// Run: npm run build && npm run -s bench bench/web-enqueue-floor.ts [seconds-per-side]   (prints one JSON object)
import { fork } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { queuePaths } from '../src/config/paths.js';
import { durableFloor, fsFloor } from './lib.js';
import { BENCH_FIELDS, cpuMs, httpClient, loadavg, newMessageBody, round, slice, webPid, webRootRunningDone } from './web-lib.js';

const SECONDS = Number(process.argv[2] ?? 6);
const SLICES = 6;
const CLIENTS = 16;
const Q = 'bench';

const { dir, w } = await webRootRunningDone(Q);
const transport = fork(path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'http-transport-floor.mjs'), [path.join(dir, 'transport.sock')]);
const load0 = await loadavg();
let result: Record<string, unknown> | undefined;
try {
  const floor = await new Promise<{ port: number; serverPid: number; backendPid: number }>((resolve, reject) => {
    transport.once('message', (m) => resolve(m as { port: number; serverPid: number; backendPid: number }));
    transport.once('exit', (code) => reject(new Error(`http-transport-floor.mjs exited with ${code}`)));
  });
  await w.mgr.cmd('pause_queue', Q);
  const status = (await w.mgr.cmd('status')) as [string, Record<string, { pid: number | null }>];
  const rqPids = { web: await webPid(w), queue: status[1][Q].pid! };
  const body = newMessageBody(Q, BENCH_FIELDS);
  const clients = {
    rq_keepalive: httpClient(w.base, CLIENTS),
    rq_per_request: httpClient(w.base, CLIENTS, false),
    transport_keepalive: httpClient(`http://127.0.0.1:${floor.port}`, CLIENTS),
    transport_per_request: httpClient(`http://127.0.0.1:${floor.port}`, CLIENTS, false),
  };
  const post = (client: ReturnType<typeof httpClient>) => async () => {
    const r = await client.post(`/q/${Q}/new_message`, body);
    if (r.status !== 200 || !r.body.startsWith('["ok"')) throw new Error(`new_message: ${r.status} ${r.body}`);
  };
  // The size of a real msg file, so the floors write the same bytes.
  const first = await clients.rq_keepalive.post(`/q/${Q}/new_message`, body);
  const id = (JSON.parse(first.body) as [string, string])[1].split('/').pop()!;
  const msgBytes = (await fs.stat(path.join(queuePaths(w.root, Q).state.que, id, 'msg'))).size;
  const transportPids = { server: floor.serverPid, backend: floor.backendPid };
  /** Each side's op, and the processes whose CPU it is charged (the bench's own, the client's, always). */
  const sides: Record<string, { op: () => Promise<void>; pids: Record<string, number> }> = {
    http_keepalive: { op: post(clients.rq_keepalive), pids: rqPids },
    http_per_request: { op: post(clients.rq_per_request), pids: rqPids },
    transport_keepalive: { op: post(clients.transport_keepalive), pids: transportPids },
    transport_per_request: { op: post(clients.transport_per_request), pids: transportPids },
    floor_nosync: { op: await fsFloor(path.join(dir, 'nosync'), Buffer.alloc(msgBytes, 'x'), false), pids: {} },
    floor_durable: { op: await durableFloor(path.join(dir, 'durable'), Buffer.alloc(msgBytes, 'x')), pids: {} },
  };
  const tot = Object.fromEntries(Object.keys(sides).map((k) => [k, { ops: 0, s: 0, cpu: {} as Record<string, number> }]));
  for (const { op } of Object.values(sides)) await slice(op, CLIENTS, 0.3);
  for (let i = 0; i < SLICES; i++) {
    for (const [k, { op, pids }] of Object.entries(sides)) {
      const before = await cpuOf(pids);
      const r = await slice(op, CLIENTS, SECONDS / SLICES);
      const after = await cpuOf(pids);
      tot[k].ops += r.ops;
      tot[k].s += r.s;
      for (const p of Object.keys(after)) tot[k].cpu[p] = (tot[k].cpu[p] ?? 0) + after[p] - before[p];
    }
  }
  for (const c of Object.values(clients)) c.close();
  const rate = Object.fromEntries(Object.entries(tot).map(([k, t]) => [k, t.ops / t.s]));
  const ratio = (keys: string[], to: string) => Object.fromEntries(keys.map((k) => [k, round(rate[k] / rate[to], 3)]));
  result = {
    per_s: Object.fromEntries(Object.entries(rate).map(([k, r]) => [k, Math.round(r)])),
    ratio_to_floor_nosync: ratio(['http_keepalive', 'http_per_request', 'transport_keepalive', 'transport_per_request', 'floor_durable'], 'floor_nosync'),
    ratio_to_floor_durable: ratio(['http_keepalive', 'http_per_request'], 'floor_durable'),
    ratio_to_transport: {
      http_keepalive: round(rate.http_keepalive / rate.transport_keepalive, 3),
      http_per_request: round(rate.http_per_request / rate.transport_per_request, 3),
    },
    cpu_us_per_request: Object.fromEntries(
      Object.entries(tot).map(([k, t]) => [k, Object.fromEntries(Object.entries(t.cpu).map(([p, ms]) => [p, Math.round((ms * 1000) / t.ops)]))]),
    ),
    msg_bytes: msgBytes,
    target: { ratio_to_floor_nosync: 0.45 },
  };
} finally {
  if (transport.connected) transport.disconnect();
  await w.stop();
  await fs.rm(dir, { recursive: true, force: true });
}
console.log(
  JSON.stringify({ bench: 'web-enqueue-floor', clients: CLIENTS, seconds_per_side: SECONDS, ...result, loadavg_before: load0, loadavg_after: await loadavg() }),
);

/** CPU ms so far of each named process, and of this one (`client`: the HTTP client, or the in-process floor). */
async function cpuOf(pids: Record<string, number>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) out[name] = await cpuMs(pid);
  const u = process.cpuUsage();
  out.client = (u.user + u.system) / 1000;
  return out;
}
