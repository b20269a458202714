// Pool delivery throughput: messages/s sent to fleet:<queue> over two pool hosts, next to a direct relay of the same messages to one of them in the same run.
// Run: npx vite-node bench/pool.ts   (prints one JSON object; BENCH_N messages per round, BENCH_REPEAT rounds, alternated)
import { EtcdProc } from '../test/helpers/etcd.js';
import type { Host } from '../test/relay/hosts.js';
import { POOL, fleetHost, poolSeen } from '../test/relay/pool-hosts.js';
import { loadavg, median, round } from './lib.js';

const N = Number(process.env.BENCH_N ?? 200);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);

/** Sends `n` messages to `dest` through the sender's relay queue in one batch; messages/s from the send to the last relayed. */
async function relayRate(sender: Host, dest: string, n: number): Promise<number> {
  const before = (await sender.q('relay', 'num_messages')).relayed as number;
  const t0 = performance.now();
  const r = await sender.q('relay', 'create_messages', { messages: Array.from({ length: n }, (_, i) => ({ dest, param1: `b${i}` })) });
  if (r[0] !== 'ok') throw new Error(`create_messages: ${JSON.stringify(r)}`);
  for (;;) {
    const c = await sender.q('relay', 'num_messages');
    if (c.relayed >= before + n) return n / ((performance.now() - t0) / 1000);
    if (c.err > 0) throw new Error(`relay errors: ${JSON.stringify(c)}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

async function main(): Promise<void> {
  // The relay's back-off stays at its default: a bench run has no failures to wait out.
  const etcd = await EtcdProc.start({ onDisk: true });
  const hosts = await Promise.all([fleetHost('s', etcd.url, false), fleetHost('a', etcd.url, true), fleetHost('b', etcd.url, true)]);
  const [sender, a] = hosts;
  try {
    await poolSeen(sender, { a: 'UP', b: 'UP' }, 'both pool hosts UP');
    const pool: number[] = [];
    const direct: number[] = [];
    await relayRate(sender, `fleet:${POOL}`, 20); // warm-up: page cache, the pool hosts' first starts
    for (let i = 0; i < REPEAT; i++) {
      direct.push(await relayRate(sender, a.url(POOL), N));
      pool.push(await relayRate(sender, `fleet:${POOL}`, N));
    }
    const p = median(pool);
    const d = median(direct);
    console.log(
      JSON.stringify({
        bench: 'pool',
        messages: N,
        rounds: REPEAT,
        pool_msgs_per_s: round(p),
        direct_relay_msgs_per_s: round(d),
        ratio: round(p / d, 2),
        pool_runs: pool.map((x) => round(x)),
        direct_runs: direct.map((x) => round(x)),
        loadavg: await loadavg(),
      }),
    );
  } finally {
    await Promise.all(hosts.map((h) => h.stop()));
    await etcd.cleanup();
  }
}

await main();
