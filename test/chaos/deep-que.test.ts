// A deep que of large messages: the queue process holds their ids and order, not their bodies, and every one still runs with its params whole.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

const BIG = process.env.RQ_CHAOS_BIG === '1';
/** CI: 2,000 × 64 KiB (125 MiB of bodies, more than the bound); RQ_CHAOS_BIG=1: the 100,000 (6.1 GiB on disk). */
const COUNT = BIG ? 100_000 : 2_000;
const BODY = 64 * 1024;
const PER_BATCH = 50;
const RSS_BOUND_MB = 150;

// Checks the body it was given, byte count and content, so a message run without its params fails.
const SCRIPT = `#!/bin/bash
want=$(printf '%s' "$RQ_PARAM2" | cut -c1)
if [ \${#RQ_PARAM1} -eq ${BODY} ] && [ "\${RQ_PARAM1:0:1}" = "$want" ] && [ "\${RQ_PARAM1: -1}" = "$want" ]; then
  echo "done ok" >&3
else
  echo "err body of \${#RQ_PARAM1} characters" >&3
fi
`;

let t: TestRoot;
let q: QueueProc;

async function rssMb(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)![1]) / 1024;
}

const letter = (i: number) => String.fromCharCode(97 + (i % 26));

beforeAll(async () => {
  t = await makeRoot();
  const script = path.join(t.root, 'check-body.sh');
  await fs.writeFile(script, SCRIPT, { mode: 0o755 });
  await addQueue(t.root, 'deep', { script, num_workers: 2 });
  await fs.writeFile(path.join(t.root, 'config', 'deep.pause'), '');
  q = await QueueProc.start(t.root, 'deep');
}, 30_000);
afterAll(
  async () => {
    await q?.stop();
    await t?.cleanup();
  },
  BIG ? 600_000 : 30_000,
);

describe(`a paused queue holding ${COUNT} messages of 64 KiB`, () => {
  it(
    `stays under ${RSS_BOUND_MB} MB of RSS, answers for each with its whole body, and runs each with it`,
    async () => {
      let peak = 0;
      for (let i = 0; i < COUNT; i += PER_BATCH) {
        const messages = Array.from({ length: Math.min(PER_BATCH, COUNT - i) }, (_, j) => ({
          dest: 'deep',
          param1: letter(i + j).repeat(BODY),
          param2: `${letter(i + j)}${i + j}`,
        }));
        const r = (await q.cmd('create_messages', { messages })) as [string, [string, string][]];
        expect(r[0]).toBe('ok');
        if (i % (PER_BATCH * 20) === 0) peak = Math.max(peak, await rssMb(q.pid));
      }
      peak = Math.max(peak, await rssMb(q.pid));
      console.log(`deep que: ${COUNT} × 64 KiB queued, queue RSS peak ${peak.toFixed(1)} MB while creating`);
      expect(peak).toBeLessThan(RSS_BOUND_MB);
      expect((await q.cmd('num_messages')).que).toBe(COUNT);
      // Whoever asks for a queued message gets its body, read back from disk.
      const first = (await q.cmd('messages', { state: 'que', limit: 1 })) as [string, string][];
      const got = (await q.cmd('get_message', { msg_id: String(first[0][0]).split('/').pop() }))[1];
      expect(got.param1).toHaveLength(BODY);
      expect(got.param1[0]).toBe(got.param2[0]);

      await fs.rm(path.join(t.root, 'config', 'deep.pause'));
      await waitFor(async () => (await q.cmd('num_messages')).done === COUNT, `all ${COUNT} messages done`, BIG ? 3_600_000 : 300_000, 200);
      expect((await q.cmd('num_messages')).err).toBe(0);
    },
    BIG ? 7_200_000 : 600_000,
  );
});
