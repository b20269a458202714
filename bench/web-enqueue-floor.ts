// HTTP enqueue at 16 clients against the disk (issue 19): POST /q/<q>/new_message (durable commit) over keep-alive
// connections and over one connection per request, beside two floors in alternating slices of the same run:
// mkdir + write of a msg of the real size + rename with no fsync, and the same plus a group-committed fdatasync of a
// journal append (what any durable enqueue at 16 in flight could do on this disk). The queue is paused: nothing runs.
// Run: npm run build && npm run -s bench bench/web-enqueue-floor.ts [seconds-per-side]   (prints one JSON object)
import fs from 'node:fs/promises';
import path from 'node:path';
import { queuePaths } from '../src/config/paths.js';
import { durableFloor, fsFloor } from './lib.js';
import { BENCH_FIELDS, httpClient, loadavg, newMessageBody, round, slice, webRootRunningDone } from './web-lib.js';

const SECONDS = Number(process.argv[2] ?? 6);
const SLICES = 6;
const CLIENTS = 16;
const Q = 'bench';

const { dir, w } = await webRootRunningDone(Q);
const load0 = await loadavg();
let result: Record<string, unknown> = {};
try {
  await w.mgr.cmd('pause_queue', Q);
  const body = newMessageBody(Q, BENCH_FIELDS);
  const keepAlive = httpClient(w.base, CLIENTS);
  const perRequest = httpClient(w.base, CLIENTS, false);
  const post = (client: typeof keepAlive) => async () => {
    const r = await client.post(`/q/${Q}/new_message`, body);
    if (r.status !== 200 || !r.body.startsWith('["ok"')) throw new Error(`new_message: ${r.status} ${r.body}`);
  };
  // The size of a real msg file, so the floors write the same bytes.
  const first = await keepAlive.post(`/q/${Q}/new_message`, body);
  const id = (JSON.parse(first.body) as [string, string])[1].split('/').pop()!;
  const msgBytes = (await fs.stat(path.join(queuePaths(w.root, Q).state.que, id, 'msg'))).size;
  const sides = {
    http_keepalive: post(keepAlive),
    http_per_request: post(perRequest),
    floor_nosync: await fsFloor(path.join(dir, 'nosync'), Buffer.alloc(msgBytes, 'x'), false),
    floor_durable: await durableFloor(path.join(dir, 'durable'), Buffer.alloc(msgBytes, 'x')),
  };
  const tot = Object.fromEntries(Object.keys(sides).map((k) => [k, { ops: 0, s: 0 }]));
  for (const op of Object.values(sides)) await slice(op, CLIENTS, 0.3);
  for (let i = 0; i < SLICES; i++) {
    for (const [k, op] of Object.entries(sides)) {
      const r = await slice(op, CLIENTS, SECONDS / SLICES);
      tot[k].ops += r.ops;
      tot[k].s += r.s;
    }
  }
  keepAlive.close();
  perRequest.close();
  const rate = Object.fromEntries(Object.entries(tot).map(([k, t]) => [k, t.ops / t.s]));
  result = {
    per_s: Object.fromEntries(Object.entries(rate).map(([k, r]) => [k, Math.round(r)])),
    ratio_to_floor_nosync: { http_keepalive: round(rate.http_keepalive / rate.floor_nosync), http_per_request: round(rate.http_per_request / rate.floor_nosync), floor_durable: round(rate.floor_durable / rate.floor_nosync) },
    ratio_to_floor_durable: { http_keepalive: round(rate.http_keepalive / rate.floor_durable), http_per_request: round(rate.http_per_request / rate.floor_durable) },
    msg_bytes: msgBytes,
    target: { ratio_to_floor_nosync: 0.45 },
  };
} finally {
  await w.stop();
  await fs.rm(dir, { recursive: true, force: true });
}
console.log(JSON.stringify({ bench: 'web-enqueue-floor', clients: CLIENTS, seconds_per_side: SECONDS, ...result, loadavg_before: load0, loadavg_after: await loadavg() }));
