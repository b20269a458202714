// What a start pays for its script's environment, as an idle queue meets it: isolated calls (one every 2 ms, so caches
// are as cold as between two creates), the JIT warmed first. rq's way (scriptEnv: the queue's ~110 variables flattened
// and checked once, the run's own laid over them, then the NUL check, PATH and the run's own `K=V` strings, which the
// native spawner puts after the shared ones it converted once) beside the same environment made anew on every start
// (copied into one object with the run's, checked and flattened key by key), and a floor: the run's ~25 strings made,
// which any launcher must do.
// Run: npm run -s bench bench/script-env.ts   (BENCH_ROUNDS, default 300; prints one JSON object)
import { scriptEnv } from '../src/queue/launch/script-env.js';
import type { Message } from '../src/message/message.js';
import { loadavg, median, quantile, round } from './lib.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const VARS = 110;

const baseEnv: NodeJS.ProcessEnv = { ...process.env };
for (let i = 0; Object.keys(baseEnv).length < VARS; i++) baseEnv[`BENCH_VAR_${i}`] = `value-${i}-${'x'.repeat(24)}`;
const envVars: Record<string, string> = {};
const msg = { msg_id: '20261206.2250.01.123.4', dest: 'bench', count: 0, param1: 'p' } as Message;
const context = (i: number) => ({
  msg: { ...msg, count: i },
  fullId: `http://127.0.0.1:3333/q/bench/${msg.msg_id}`,
  queue: 'bench',
  script: 'run',
  realScript: '/queues/bench/run',
  jobDir: '/spool/run/job',
  hostUrl: 'http://127.0.0.1:3333/',
  port: 3333,
  envVars,
  baseEnv,
  runEnv: { RQ_ATTEMPT: '1' },
});

function rqWay(i: number): number {
  const env = scriptEnv(context(i));
  if (env.holdsNul() || env.get('PATH') === undefined) throw new Error('bench: unexpected environment');
  const { shared, own } = env.parts();
  return (shared?.entries.length ?? 0) + own.length;
}

/** Every start copying, checking and flattening the whole environment. */
function everyStart(i: number): number {
  const own = scriptEnv(context(i)).own;
  const env: NodeJS.ProcessEnv = {};
  for (const k in baseEnv) if (k !== 'RUBYOPT') env[k] = baseEnv[k];
  for (const k in own) env[k] = own[k];
  for (const k in env) if (k.includes('\0') || env[k]?.includes('\0')) throw new Error('bench: NUL');
  const envp: string[] = [];
  for (const k in env) if (env[k] !== undefined) envp.push(k + '=' + env[k]);
  return envp.length;
}

/** The floor: the run's own strings made. */
function floor(i: number): number {
  const own: string[] = [];
  for (let k = 0; k < 25; k++) own.push(`RQ_F${k}=${i}`);
  return own.length;
}

const SIDES = { rq: rqWay, every_start: everyStart, floor };
for (let i = 0; i < 20_000; i++) for (const f of Object.values(SIDES)) f(i);
const us: Record<string, number[]> = { rq: [], every_start: [], floor: [] };
for (let i = 0; i < ROUNDS; i++) {
  await new Promise((r) => setTimeout(r, 2));
  for (const [name, f] of Object.entries(SIDES)) {
    const t = process.hrtime.bigint();
    f(i);
    us[name].push(Number(process.hrtime.bigint() - t) / 1000);
  }
}
const stat = (xs: number[]) => ({ median: round(median(xs), 1), p90: round(quantile(xs, 0.9), 1) });
console.log(
  JSON.stringify({
    bench: 'script-env',
    rounds: ROUNDS,
    variables: Object.keys(baseEnv).length,
    rq_us: stat(us.rq),
    every_start_us: stat(us.every_start),
    floor_us: stat(us.floor),
    rq_minus_floor_us: round(median(us.rq) - median(us.floor), 1),
    loadavg: await loadavg(),
  }),
);
