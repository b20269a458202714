// Resident memory (VmRSS) of the web process after 10,000 mixed requests — dashboard, /q.json, message
// .json, state.json — with 8 keep-alive clients, next to its RSS when idle after start in the same run,
// and after a second 10,000 (growth between the two would be a leak).
// Run: npm run build && npx vite-node bench/web-rss.ts [requests-per-round]   (prints one JSON object)
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DONE_SCRIPT } from './lib.js';
import { httpClient, loadavg, rssMb, round, send, waitDone, webPid, webRoot } from './web-lib.js';

const REQUESTS = Number(process.argv[2] ?? 10_000);
const CLIENTS = 8;
const Q = 'mem';

const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-bench-'));
const script = path.join(dir, 'run.sh');
await fs.writeFile(script, DONE_SCRIPT, { mode: 0o755 });
const load0 = await loadavg();
const w = await webRoot({ [Q]: { script }, other: { script } });
const out: Record<string, unknown> = {};
try {
  const pid = await webPid(w);
  const client = httpClient(w.base, CLIENTS);
  // Some done messages to ask about, so the message routes read real message directories.
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) ids.push(await send(client, Q, { param1: `p${i}`, param2: 'x'.repeat(200) }));
  for (const id of ids) await waitDone(client, Q, id);
  const paths = ['/', '/q.json', ...ids.map((id) => `/q/${Q}/${id}.json`), ...ids.map((id) => `/q/${Q}/${id}/state.json`)];
  // Interleaved so each kind is a quarter of the load: dashboard, q.json, message json, state.json.
  const mix = (i: number) => (i % 4 === 0 ? paths[0] : i % 4 === 1 ? paths[1] : i % 4 === 2 ? paths[2 + (i % 20)] : paths[22 + (i % 20)]);
  const round_ = async (n: number) => {
    let next = 0;
    let peak = 0;
    const sampler = setInterval(
      () =>
        void rssMb(pid).then(
          (r) => (peak = Math.max(peak, r)),
          () => undefined,
        ),
      100,
    );
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < n) {
          const p = mix(next++);
          const r = await client.get(p);
          if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${r.body.slice(0, 200)}`);
        }
      }),
    );
    const s = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    return { requests_per_s: Math.round(n / s), rss_mb: round(await rssMb(pid), 1), peak_rss_mb: round(Math.max(peak, await rssMb(pid)), 1) };
  };
  out.idle_after_start_rss_mb = round(await rssMb(pid), 1);
  out.first = await round_(REQUESTS);
  out.second = await round_(REQUESTS);
  client.close();
} finally {
  await w.stop();
  await fs.rm(dir, { recursive: true, force: true });
}
console.log(
  JSON.stringify({
    bench: 'web-rss',
    requests_per_round: REQUESTS,
    clients: CLIENTS,
    ...out,
    target: { rss_mb_after_10k: 120 },
    loadavg_before: load0,
    loadavg_after: await loadavg(),
  }),
);
