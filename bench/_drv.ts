import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { liveQueue, writeScript } from './lib.js';
import { waitFor } from '../test/helpers/rq-root.js';
const nowMs = () => performance.timeOrigin + performance.now();
const dir = await fsp.mkdtemp('/tmp/rq-bench-');
const script = await writeScript(dir, '#!/bin/bash\necho "done $EPOCHREALTIME" >&3\n');
const lq = await liveQueue('lat', { script, num_workers: 1 });
fs.writeFileSync('/tmp/trace.log', '');
for (let i = 0; i < 100; i++) {
  const id = String((await lq.q.cmd('prep_message', { dest: 'lat' }))[1]).split('/').pop()!;
  await new Promise((r) => setTimeout(r, 5));
  fs.appendFileSync('/tmp/trace.log', `t0 ${nowMs().toFixed(3)}\n`);
  await lq.q.cmd('commit_message', { msg_id: id });
  await waitFor(async () => (await lq.q.state(id)) === 'done', 'done', 10_000, 1);
  const st = await lq.q.cmd('get_message_status', { msg_id: id });
  fs.appendFileSync('/tmp/trace.log', `start ${(Number(String(st[1].status).split(' - ')[1]) * 1000).toFixed(3)}\n`);
}
await lq.close();
const lines = fs.readFileSync('/tmp/trace.log', 'utf8').trim().split('\n').map((l) => l.split(' '));
// group per sample: from each t0 to the next start
const samples: Record<string, number>[] = [];
let cur: Record<string, number> | null = null;
for (const [k, v] of lines) {
  if (k === 't0') cur = { t0: Number(v) };
  else if (cur && !(k in cur)) cur[k] = Number(v);
  if (k === 'start' && cur) { samples.push(cur); cur = null; }
}
const keys = ['req', 'commit0', 'run0', 'launch0', 'ss0', 'nl0', 'nl1', 'nl2', 'nl3', 'launch1', 'start'];
const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let prev = 't0';
for (const k of keys) { console.log(`${prev}->${k}`, med(samples.map((s) => s[k] - s[prev])).toFixed(3)); prev = k; }
console.log('total', med(samples.map((s) => s.start - s.t0)).toFixed(3));
