// Latency from an HTTP enqueue (POST /q/<q>/new_message, x_format=json) to the script's start on an idle
// queue, next to a create_message straight on the queue socket and a bare spawn of the same script, all in
// the same run (HTTP and socket samples alternate). The script reports $EPOCHREALTIME as its first act.
// Run: npm run build && npx vite-node bench/web-latency.ts   (prints one JSON object)
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { queuePaths } from '../src/config/paths.js';
import { SocketConnection } from '../src/ipc/socket-client.js';
import { waitFor } from '../test/helpers/rq-root.js';
import { httpClient, loadavg, median, newMessageBody, nowMs, quantile, rawSpawnLatency, round, webRoot } from './web-lib.js';

const N = Number(process.env.BENCH_N ?? 200);
const Q = 'lat';
const SCRIPT = '#!/bin/bash\necho "done $EPOCHREALTIME" >&3\n';

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
const script = path.join(dir, 'run.sh');
await fs.writeFile(script, SCRIPT, { mode: 0o755 });
const load0 = await loadavg();
const raw = await rawSpawnLatency(script, dir, N);
const w = await webRoot({ [Q]: { script } });
const viaHttp: number[] = [];
const viaSocket: number[] = [];
// When the `ok` came back (the durable create), to tell the queue's fsync from the start itself.
const httpReply: number[] = [];
const socketReply: number[] = [];
try {
  const sock = await SocketConnection.open(queuePaths(w.root, Q).sock, 'rq1', { timeoutMs: 30_000 });
  const ask = async (command: string, arg: unknown) => JSON.parse(await sock.request(`${command} ${JSON.stringify(arg)}`));
  const client = httpClient(w.base, 1);
  // Start time as the script reported it, once the message is done (polled on the socket, off the web process).
  const startedAt = async (id: string): Promise<number> => {
    await waitFor(async () => (await ask('get_message_state', { msg_id: id }))[1] === 'done', `${id} done`, 10_000, 1);
    const st = await ask('get_message_status', { msg_id: id });
    return Number(String(st[1].status).split(' - ')[1]) * 1000;
  };
  const body = newMessageBody(Q);
  // Warm-up: connections, JIT, the queue's first spawn.
  for (let i = 0; i < 10; i++)
    await startedAt(
      JSON.parse((await client.post(`/q/${Q}/new_message`, body)).body)[1]
        .split('/')
        .pop(),
    );
  for (let i = 0; i < N; i++) {
    let t0 = nowMs();
    const r = await client.post(`/q/${Q}/new_message`, body);
    httpReply.push(nowMs() - t0);
    if (r.status !== 200) throw new Error(`new_message: ${r.status} ${r.body}`);
    viaHttp.push((await startedAt(JSON.parse(r.body)[1].split('/').pop())) - t0);
    t0 = nowMs();
    const s = await ask('create_message', { dest: Q });
    socketReply.push(nowMs() - t0);
    viaSocket.push((await startedAt(String(s[1]).split('/').pop()!)) - t0);
  }
  client.close();
  sock.close();
} finally {
  await w.stop();
  await fs.rm(dir, { recursive: true, force: true });
}
const stats = (xs: number[]) => ({ median: round(median(xs)), p90: round(quantile(xs, 0.9)), p99: round(quantile(xs, 0.99)) });
console.log(
  JSON.stringify({
    bench: 'web-latency',
    samples: N,
    http_enqueue_to_start_ms: stats(viaHttp),
    socket_create_to_start_ms: stats(viaSocket),
    raw_spawn_to_start_ms: stats(raw),
    http_reply_ms: stats(httpReply),
    socket_reply_ms: stats(socketReply),
    http_overhead_median_ms: round(median(viaHttp) - median(viaSocket)),
    target: { http_median_ms: 5 },
    loadavg_before: load0,
    loadavg_after: await loadavg(),
  }),
);
