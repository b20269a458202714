// GET /metrics against a real rq-mgr, web and queue processes (rq-beyond §B16): the exposition parses,
// its counters equal what the queues counted (and the truth of the messages sent), a queue that does
// not answer is only rq_queue_up 0, and rq-mgr's restarts and limit table are there.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROM_BUCKETS, type QueueMetrics } from '../../src/ipc/stats-reply.js';
import { waitFor } from '../helpers/rq-root.js';
import { type Scrape, parseScrape } from '../helpers/prom-text.js';
import { type WebRoot, startWebRoot } from './web-root.js';

let w: WebRoot;
let holder: string;
let tenant: string;

/** What alpha is sent, and what each plan makes of it: runs, failures by kind, final state. */
const PLANS: Record<string, unknown>[] = [
  { param1: 'done' },
  { param1: 'done' },
  { param1: 'done' },
  { param1: 'relayed' },
  { param1: 'err' },
  { param1: 'nothing' },
  { param1: 'fatal' },
  { param1: 'flaky', param2: '2', max_retries: 2, backoff_base: 0.05, min_retry_delay: 0, retry_jitter: 0 },
  { param1: 'resend1' },
];
/** Two runs each for flaky (an err, then done) and resend1. */
const RUNS = PLANS.length + 2;

async function scrape(headers: Record<string, string> = {}): Promise<{ res: Response; text: string; p: Scrape }> {
  const res = await fetch(`${w.base}/metrics`, { headers });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return { res, text, p: parseScrape(text) };
}

const queueMetrics = async (q: string): Promise<QueueMetrics> => (await w.mgr.q(q, 'metrics'))[1];

async function workerOf(q: string): Promise<{ pid: number; restarts: number }> {
  return (await w.mgr.cmd('status'))[1][q];
}

beforeAll(async () => {
  w = await startWebRoot({
    queues: { alpha: { num_workers: 2 }, beta: { num_workers: 2 } },
    setup: async (root) => {
      await fs.writeFile(path.join(root, 'config', 'limits.json'), JSON.stringify({ 'api:*': 2, reports: 1 }));
    },
  });
  const ids: string[] = [];
  for (const fields of PLANS)
    ids.push(
      String((await w.mgr.q('alpha', 'create_message', { dest: 'alpha', ...fields }))[1])
        .split('/')
        .pop()!,
    );
  for (const id of ids) expect((await w.mgr.q('alpha', 'wait_message', { msg_id: id, timeout: 20 }))[0]).toBe('ok');
  // The run histogram counts at each run's end event, which may follow the move wait_message saw.
  await waitFor(async () => (await queueMetrics('alpha')).totals.run.count === RUNS, 'alpha to have counted every run');
  // beta runs one script that holds a slot of api:acme until the end of the file.
  holder = String((await w.mgr.q('beta', 'create_message', { dest: 'beta', param1: 'forever', limit: 'api:{param3}', param3: 'acme' }))[1])
    .split('/')
    .pop()!;
  // …and one a slot of tenant:x, a key of a template that no entry of limits.json matches.
  tenant = String(
    (await w.mgr.q('beta', 'create_message', { dest: 'beta', param1: 'forever', limit: 'tenant:{param3}', param3: 'x', limit_concurrency: 1 }))[1],
  )
    .split('/')
    .pop()!;
  for (const id of [holder, tenant])
    await waitFor(async () => (await w.mgr.q('beta', 'get_message_state', { msg_id: id }))[1] === 'run', `beta's ${id} to run`);
}, 90_000);

afterAll(async () => {
  await w?.stop();
});

describe('GET /metrics', () => {
  it('is text format 0.0.4 that parses, with rq-mgr up', async () => {
    const { res, p } = await scrape();
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(p.value('rq_up')).toBe(1);
    const head = await fetch(`${w.base}/metrics`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type')]).toEqual([200, 'text/plain; version=0.0.4; charset=utf-8']);
  });

  it('counters equal the messages sent and what the queue itself counted (metrics and stats)', async () => {
    const { p } = await scrape();
    const m = await queueMetrics('alpha');
    const a = { queue: 'alpha' };
    const finished = (state: string, outcome = '') => p.value('rq_messages_finished_total', { queue: 'alpha', state, outcome });
    // The truth of the plans.
    expect(p.value('rq_messages_created_total', a)).toBe(PLANS.length);
    expect([finished('done'), finished('relayed'), finished('err', 'failed'), finished('err', 'fatal'), finished('err', 'exhausted')]).toEqual([5, 1, 2, 1, 0]);
    expect([
      p.value('rq_message_failures_total', { queue: 'alpha', kind: 'err' }),
      p.value('rq_message_failures_total', { queue: 'alpha', kind: 'exit' }),
      p.value('rq_message_failures_total', { queue: 'alpha', kind: 'timeout' }),
    ]).toEqual([2, 1, 0]);
    expect([p.value('rq_message_retries_total', a), p.value('rq_message_resends_total', a), p.value('rq_message_interrupts_total', a)]).toEqual([1, 1, 0]);
    expect(p.histogram('rq_message_run_seconds', a)!.count).toBe(RUNS);
    expect(p.histogram('rq_message_wait_seconds', a)!.count).toBe(RUNS);
    // The queue's own figures, label by label.
    expect(p.value('rq_messages_created_total', a)).toBe(m.totals.created);
    expect(finished('done')).toBe(m.totals.finished.done);
    for (const [outcome, n] of Object.entries(m.totals.finished.err)) expect(finished('err', outcome)).toBe(n);
    for (const [kind, n] of Object.entries(m.totals.failures)) expect(p.value('rq_message_failures_total', { queue: 'alpha', kind })).toBe(n);
    for (const h of ['wait', 'run'] as const) {
      const got = p.histogram(`rq_message_${h}_seconds`, a)!;
      expect([got.count, got.sum]).toEqual([m.totals[h].count, m.totals[h].sum]);
      let below = 0;
      PROM_BUCKETS.forEach((b, i) => {
        below += m.totals[h].buckets[i];
        expect(got.buckets[String(b)], `${h} le=${b}`).toBe(below);
      });
    }
    for (const [state, n] of Object.entries(m.live.counts)) expect(p.value('rq_queue_messages', { queue: 'alpha', state }), state).toBe(n);
    expect(p.value('rq_queue_status', { queue: 'alpha', status: 'UP' })).toBe(1);
    expect([p.value('rq_queue_workers', a), p.value('rq_queue_running_scripts', a)]).toEqual([2, 0]);
    // A fresh root: today's statistics are all there is (unless this test straddles a UTC midnight).
    const day = (await w.mgr.q('alpha', 'stats'))[1];
    if (day.date === new Date().toISOString().slice(0, 10).replaceAll('-', '')) {
      expect([day.created, day.done, day.relayed, day.err, day.retries, day.resends, day.failures, day.run.count]).toEqual([
        p.value('rq_messages_created_total', a),
        finished('done'),
        finished('relayed'),
        finished('err', 'failed')! + finished('err', 'fatal')!,
        1,
        1,
        3,
        RUNS,
      ]);
    }
  });

  it('shows the running scripts, their limit slots under the glob or the template, and every limits.json entry', async () => {
    const { p } = await scrape();
    expect([p.value('rq_queue_running_scripts', { queue: 'beta' }), p.value('rq_queue_messages', { queue: 'beta', state: 'run' })]).toEqual([2, 2]);
    const limit = (key: string) => [p.value('rq_limit_concurrency', { key }), p.value('rq_limit_in_use', { key }), p.value('rq_limit_waiting', { key })];
    expect(limit('api:*')).toEqual([2, 1, 0]);
    expect(limit('reports')).toEqual([1, 0, 0]);
    expect(limit('tenant:*')).toEqual([1, 1, 0]);
    // rq-mgr still knows the keys themselves.
    expect(p.value('rq_limit_in_use', { key: 'api:acme' })).toBeUndefined();
    expect(p.value('rq_limit_in_use', { key: 'tenant:x' })).toBeUndefined();
    const table = (await w.mgr.cmd('limit_status', '{}'))[1];
    expect([table['tenant:x'].pattern, table['api:acme'].pattern]).toEqual(['tenant:*', 'api:*']);
  });

  it("rq-mgr refuses a pattern that is not a key's text", async () => {
    const probe = { key: 'k', holder: 'probe/20200101.0000.00.000.1', since: 0, concurrency: 1 };
    expect(await w.mgr.cmd('limit_acquire', JSON.stringify({ ...probe, pattern: 5 }))).toEqual(['fail', 'pattern: expected a limit key pattern, received 5']);
    expect(await w.mgr.cmd('limit_acquire', JSON.stringify({ ...probe, pattern: 'a\u0001' }))).toEqual([
      'fail',
      expect.stringMatching(/^pattern: expected a key of 1-256 characters without control characters/),
    ]);
  });

  it('a queue that does not answer (its process stopped) contributes only rq_queue_up 0, after its 1 s', async () => {
    const { pid } = await workerOf('beta');
    process.kill(pid, 'SIGSTOP');
    try {
      const t0 = performance.now();
      const { p } = await scrape();
      const ms = performance.now() - t0;
      expect(ms).toBeGreaterThanOrEqual(900);
      expect(ms).toBeLessThan(5000);
      expect(p.value('rq_queue_up', { queue: 'beta' })).toBe(0);
      // rq-mgr's count of its restarts is rq-mgr's figure, not the queue's.
      expect(p.seriesWith('queue', 'beta').sort()).toEqual(['rq_queue_process_restarts_total{queue="beta"}', 'rq_queue_up{queue="beta"}']);
      expect(p.value('rq_queue_up', { queue: 'alpha' })).toBe(1);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect((await scrape()).p.value('rq_queue_up', { queue: 'beta' })).toBe(1);
  });

  it("counts rq-mgr's restarts of a queue process; the counters survive a clean restart", async () => {
    const before = (await scrape()).p;
    expect(before.value('rq_queue_process_restarts_total', { queue: 'alpha' })).toBe(0);
    const { pid } = await workerOf('alpha');
    expect(await w.mgr.cmd('restart_queue', 'alpha')).toEqual(['ok', 'alpha']);
    expect(await w.mgr.waitQueueUp('alpha')).not.toBe(pid);
    const { p } = await scrape();
    expect(p.value('rq_queue_process_restarts_total', { queue: 'alpha' })).toBe(1);
    expect(p.value('rq_queue_process_restarts_total', { queue: 'beta' })).toBe(0);
    expect(p.value('rq_queue_up', { queue: 'alpha' })).toBe(1);
    for (const name of ['rq_messages_created_total', 'rq_message_retries_total', 'rq_message_resends_total'])
      expect(p.value(name, { queue: 'alpha' }), name).toBe(before.value(name, { queue: 'alpha' }));
    expect(p.histogram('rq_message_run_seconds', { queue: 'alpha' })).toEqual(before.histogram('rq_message_run_seconds', { queue: 'alpha' }));
  });
});
