// HTTP enqueue rate (POST /q/<q>/new_message, x_format=json, durable commit) at 1, 4 and 16 keep-alive
// clients against a paused queue, next to the same create_message requests sent straight to the queue
// socket by as many clients (one connection each) in alternating slices of the same run.
// Run: npm run build && npx vite-node bench/web-enqueue.ts [seconds-per-side-per-level]   (prints one JSON object)
import { queuePaths } from '../src/config/paths.js';
import { SocketConnection } from '../src/ipc/socket-client.js';
import { BENCH_FIELDS, cpuMs, httpClient, loadavg, newMessageBody, paired, round, webPid, webRootRunningDone } from './web-lib.js';
import fs from 'node:fs/promises';

const SECONDS = Number(process.argv[2] ?? 6);
const LEVELS = [1, 4, 16];
const Q = 'bench';

const { dir, w } = await webRootRunningDone(Q);
const load0 = await loadavg();
const results: Record<string, unknown> = {};
let sent = 0;
try {
  // Paused: the messages stay in que, so this measures the enqueue path and nothing runs beside it.
  await w.mgr.cmd('pause_queue', Q);
  const socketPayload = `create_message ${JSON.stringify({ dest: Q, ...BENCH_FIELDS })}`;
  const body = newMessageBody(Q, BENCH_FIELDS);
  const pid = await webPid(w);
  for (const c of LEVELS) {
    const client = httpClient(w.base, c);
    // A queue answers one connection's requests in turn: direct clients each have their own.
    const socks = await Promise.all(Array.from({ length: c }, () => SocketConnection.open(queuePaths(w.root, Q).sock, 'rq1', { timeoutMs: 30_000 })));
    const viaHttp = async () => {
      const r = await client.post(`/q/${Q}/new_message`, body);
      if (r.status !== 200 || !r.body.startsWith('["ok"')) throw new Error(`new_message: ${r.status} ${r.body}`);
    };
    const viaSocket = async () => {
      const sock = socks.reduce((a, b) => (b.inFlight() < a.inFlight() ? b : a));
      const r = await sock.request(socketPayload);
      if (!r.startsWith('["ok"')) throw new Error(`create_message: ${r}`);
    };
    // A short warm-up (JIT, connections) that is not counted.
    await paired(viaHttp, viaSocket, c, 0.5, 1);
    const cpu0 = await cpuMs(pid);
    const r = await paired(viaHttp, viaSocket, c, SECONDS);
    // What one HTTP enqueue costs the web process, whatever the machine's load (it idles in the socket slices).
    const webCpuUs = (((await cpuMs(pid)) - cpu0) * 1000) / r.a.ops;
    client.close();
    for (const sock of socks) sock.close();
    sent += r.a.ops + r.b.ops;
    results[`c${c}`] = {
      http_msgs_per_s: Math.round(r.a.rate),
      socket_msgs_per_s: Math.round(r.b.rate),
      ratio: round(r.a.rate / r.b.rate),
      http_msgs: r.a.ops,
      web_cpu_us_per_msg: Math.round(webCpuUs),
    };
  }
  const counts = (await w.mgr.q(Q, 'num_messages')) as Record<string, number>;
  results.que_after = counts.que;
} finally {
  await w.stop();
  await fs.rm(dir, { recursive: true, force: true });
}
console.log(
  JSON.stringify({
    bench: 'web-enqueue',
    seconds_per_side_per_level: SECONDS,
    ...results,
    measured_messages: sent,
    target: { http_msgs_per_s_at_16: 1000 },
    loadavg_before: load0,
    loadavg_after: await loadavg(),
  }),
);
