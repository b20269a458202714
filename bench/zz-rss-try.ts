import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { makeRoot, addQueue } from '../test/helpers/rq-root.js';
const t = await makeRoot(); const root = t.root; await addQueue(root, 'q1');
const rss = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
for (const [label, file, flags] of [['tsc', 'queue-main.js', []], ['bundle', 'qm-bundle.js', []], ['min', 'qm-min.js', []], ['min semi1', 'qm-min.js', ['--max-semi-space-size=1']]] as [string, string, string[]][]) {
  const vals = [];
  for (let k = 0; k < 3; k++) {
    const c = spawn(process.execPath, [...flags, path.join('dist/queue', file), '--root', root, '--name', 'q1'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const sock = path.join(root, 'queues', 'q1', 'queue.sock');
    for (let i = 0; i < 200 && !fs.existsSync(sock); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 1500));
    vals.push(rss(c.pid!).toFixed(1));
    c.kill('SIGTERM'); await new Promise((r) => c.on('close', r));
  }
  console.log(label, vals.join(' '));
}
const bare = spawn(process.execPath, ['-e', 'setInterval(()=>{},1e9)']);
await new Promise((r) => setTimeout(r, 1000));
console.log('bare', rss(bare.pid!).toFixed(1)); bare.kill();
await t.cleanup();
