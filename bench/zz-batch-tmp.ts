import fs from 'node:fs/promises';
import path from 'node:path';
import { QueueProc, addQueue, makeRoot } from '../test/helpers/rq-root.js';
import { queueCommand } from '../src/ipc/rq1.js';
const t = await makeRoot();
await addQueue(t.root, 'b');
await fs.writeFile(path.join(t.root, 'config', 'b.pause'), '');
import { spawn } from 'node:child_process';
import { queuePaths } from '../src/config/paths.js';
import { waitFor } from '../test/helpers/rq-root.js';
const child = spawn(process.execPath, ['dist/queue/queue-main.js', '--root', t.root, '--name', 'b'], { stdio: 'ignore' });
const q = { paths: queuePaths(t.root, 'b'), stop: async () => { child.kill('SIGTERM'); await new Promise((r) => child.once('exit', r)); } };
await waitFor(async () => ((await queueCommand(q.paths.sock, 'ping', {}).catch(() => null)) as any)?.[0] === 'pong', 'ping');
const n = Number(process.env.N ?? 10000);
for (let round = 0; round < 2; round++) {
  const msgs = Array.from({ length: n }, (_, i) => ({ dest: 'b', param1: `m${i}` }));
  const t0 = performance.now();
  const r: any = await queueCommand(q.paths.sock, 'create_messages', { messages: msgs }, { timeoutMs: 300_000 });
  console.log(round, r[0], r[1].length, Math.round(performance.now() - t0), 'ms', Math.round(n / ((performance.now() - t0) / 1000)), '/s');
}
await q.stop();

import fss from 'node:fs';
const fl = path.join(t.root, 'floor'); fss.mkdirSync(fl);
const t1 = performance.now();
for (let i = 0; i < n; i++) { const d = path.join(fl, `_t${i}`); fss.mkdirSync(d); fss.writeFileSync(path.join(d, 'msg'), JSON.stringify({ dest: 'b', param1: 'x'.repeat(200) })); fss.renameSync(d, path.join(fl, `m${i}`)); }
console.log('floor', Math.round(n / ((performance.now() - t1) / 1000)), '/s');
await t.cleanup();
