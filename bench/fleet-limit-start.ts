// What a fleet-wide limit adds to a start: BENCH_N messages (default 200) each sent alone and run to its end, alternating between a queue under a local
// limit key and one under a fleet key (`"scope": "fleet"`, its slot taken in a real etcd on loopback), on one rq-mgr; a start's latency is its que→run
// time less its creation time (both in its history). Goal: the fleet's p50 no more than 5 ms above the local one's. The floor, in the same run and
// the same etcd: what a slot's grant cannot do without, one durable put of a waiter key and a read of the line (etcd_floor_ms); on a disk whose
// fsync is slow the extra is judged above it (extra_over_floor_p50_ms).
// Run: npm run build && npm run -s bench bench/fleet-limit-start.ts   (prints one JSON object)
import fs from 'node:fs';
import path from 'node:path';
import { idTime } from '../src/message/message-id.js';
import { EtcdProc } from '../test/helpers/etcd.js';
import { EtcdStore } from '../src/fleet/etcd-client.js';
import { MgrProc } from '../test/helpers/mgr-proc.js';
import { addQueue, makeRoot, waitFor } from '../test/helpers/rq-root.js';
import { DONE_SCRIPT, loadavg, round, writeScript } from './lib.js';

const N = Number(process.env.BENCH_N ?? 200);

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

const etcd = await EtcdProc.start({ onDisk: true });
const t = await makeRoot();
let mgr: MgrProc | null = null;
try {
  const file = path.join(t.root, 'config', 'config.json');
  const config = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  config.fleet = { name: 'bench', etcd: [etcd.url], host: 'b1', advertise: `http://127.0.0.1:${t.port}/`, lease_ttl_s: 10 };
  fs.writeFileSync(file, JSON.stringify(config));
  fs.writeFileSync(path.join(t.root, 'config', 'limits.json'), JSON.stringify({ fleet: { concurrency: 1, scope: 'fleet' }, local: 1 }));
  const script = await writeScript(t.root, DONE_SCRIPT);
  await addQueue(t.root, 'fl', { script, extra: { limit: 'fleet' } });
  await addQueue(t.root, 'lo', { script, extra: { limit: 'local' } });
  mgr = await MgrProc.start(t.root);
  const m = mgr;
  for (const q of ['fl', 'lo']) await m.waitQueueUp(q);
  // Past rq-mgr's settling and the fleet's join: a first run of each has started.
  const startOf = async (q: string): Promise<number> => {
    const sent = await m.q(q, 'create_message', { dest: q });
    const id = String(sent[1]).split('/').pop()!;
    await waitFor(async () => (await m.q(q, 'wait_message', { msg_id: id, timeout: 5 }))[0] === 'ok', `${q}/${id} to finish`, 30_000);
    const h = (await m.q(q, 'get_history', { msg_id: id }))[1] as { at: string; from?: string; to?: string }[];
    return Date.parse(h.find((e) => e.from === 'que' && e.to === 'run')!.at) - idTime(id)!;
  };
  for (const q of ['fl', 'lo']) await startOf(q);
  const load = await loadavg();
  const fleet: number[] = [];
  const local: number[] = [];
  for (let i = 0; i < N; i++) {
    fleet.push(await startOf('fl'));
    local.push(await startOf('lo'));
  }
  // The floor: a put of a waiter-sized key and a read of its prefix, one after the other, as a grant needs at least.
  const store = await EtcdStore.open({ endpoints: [etcd.url] });
  const floor: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await store.put(`/bench/floor/${i}`, JSON.stringify({ host: 'b1', ref: `fl/${i}`, since: Date.now() }));
    await store.getPrefix('/bench/floor/');
    floor.push(performance.now() - t0);
  }
  store.close();
  const p50 = { fleet: quantile(fleet, 0.5), local: quantile(local, 0.5), floor: quantile(floor, 0.5) };
  console.log(
    JSON.stringify({
      bench: 'fleet-limit-start',
      messages_each: N,
      loadavg: load,
      local_start_ms: { p50: p50.local, p90: quantile(local, 0.9), p99: quantile(local, 0.99) },
      fleet_start_ms: { p50: p50.fleet, p90: quantile(fleet, 0.9), p99: quantile(fleet, 0.99) },
      extra_p50_ms: round(p50.fleet - p50.local, 1),
      etcd_floor_ms: { p50: round(p50.floor, 2), p90: round(quantile(floor, 0.9), 2) },
      extra_over_floor_p50_ms: round(p50.fleet - p50.local - p50.floor, 1),
      goal_extra_p50_ms: 5,
    }),
  );
} finally {
  await mgr?.stop();
  await t.cleanup();
  await etcd.cleanup();
}
