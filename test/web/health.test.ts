// GET /healthz by queue state against a real rq-mgr: SCRIPTERROR (with its reason) and a state left out of healthy_states are 503, an operator's DOWN is as healthy as the list says.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HealthReport } from '../../src/web/health.js';
import { waitFor } from '../helpers/rq-root.js';
import { type WebRoot, postForm, send, startWebRoot } from './web-root.js';

let w: WebRoot;
let dir: string;
let script: string;

async function health(): Promise<{ code: number; body: HealthReport }> {
  const res = await fetch(`${w.base}/healthz`);
  return { code: res.status, body: (await res.json()) as HealthReport };
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-health-'));
  script = path.join(dir, 'run');
  await fs.writeFile(script, '#!/bin/bash\necho "done fixed" >&3\n', { mode: 0o755 });
  // PAUSE is left out of the list on purpose: the list, not a fixed rule, decides.
  w = await startWebRoot({ config: { healthy_states: ['UP', 'DOWN'], queue_reply_timeout_s: 1 }, queues: { good: {}, fixme: { script } } });
}, 60_000);
afterAll(async () => {
  await w?.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('/healthz', () => {
  it('reports each queue state and the list in use', async () => {
    const h = await health();
    expect(h.code).toBe(200);
    expect(h.body).toMatchObject({
      status: 'ok',
      healthy_states: ['UP', 'DOWN'],
      mgr: { up: true },
      queues: { good: { status: 'UP', healthy: true }, fixme: { status: 'UP', healthy: true } },
      failing: [],
    });
    expect(h.body.checked).toEqual(expect.arrayContaining(['rq-mgr', 'queue good', 'queue fixme']));
  });

  it('is 503 while a queue is in SCRIPTERROR, and 200 again once its script is fixed', async () => {
    await fs.chmod(script, 0o644);
    await send(w.base, 'fixme', {});
    const bad = await waitFor(async () => {
      const h = await health();
      return h.code === 503 ? h : false;
    }, '/healthz to turn 503');
    // Why, as the queue gives it: a client sees the reason, not only the red state.
    const reason = `script ${await fs.realpath(script)} is not executable`;
    expect(bad.body.queues.fixme).toEqual({ status: 'SCRIPTERROR', healthy: false, reason });
    expect(bad.body.queues.good).toEqual({ status: 'UP', healthy: true });
    expect(bad.body.failing).toEqual([{ name: 'queue fixme', error: `status SCRIPTERROR is not one of healthy_states (UP, DOWN): ${reason}` }]);
    await fs.chmod(script, 0o755);
    await waitFor(async () => (await health()).code === 200, '/healthz to be 200 again');
  });

  it('counts an operator DOWN as the list says (listed here) and PAUSE as unhealthy when left out', async () => {
    await postForm(`${w.base}/q/good/adminoper`, { down: '1' });
    const down = await health();
    expect(down.code).toBe(200);
    expect(down.body.queues.good).toEqual({ status: 'DOWN', healthy: true });
    await postForm(`${w.base}/q/good/adminoper`, { up: '1' });
    await postForm(`${w.base}/q/good/adminoper`, { pause: '1' });
    const paused = await health();
    expect(paused.code).toBe(503);
    expect(paused.body.queues.good).toEqual({ status: 'PAUSE', healthy: false });
    await postForm(`${w.base}/q/good/adminoper`, { resume: '1' });
    expect((await health()).code).toBe(200);
  });

  it('is 503 with the fault while a queue process does not answer, whatever the list says', async () => {
    const pid = (await w.mgr.cmd('status'))[1].good.pid as number;
    expect(Number.isInteger(pid) && pid > 1).toBe(true);
    // Stopped, not killed: its socket stays, nobody answers, and rq-mgr still shows it RUNNING.
    process.kill(pid, 'SIGSTOP');
    try {
      const h = await health();
      expect(h.code).toBe(503);
      expect(h.body.queues.good).toMatchObject({ status: 'DOWN', healthy: false, fault: expect.stringMatching(/timed out/) });
      expect(h.body.failing.map((f) => f.name)).toEqual(['queue good']);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await waitFor(async () => (await health()).code === 200, '/healthz to be 200 again');
  });
});
