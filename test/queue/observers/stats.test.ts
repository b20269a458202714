// Statistics per queue (rq-beyond §B15): after thousands of messages with a known mix of outcomes and known run times, every counter and histogram equals the truth; retries are the retry policy's returns to the que only.
import fs from 'node:fs';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { PROM_BUCKETS } from '../../../src/ipc/stats-reply.js';
import { handleRequest } from '../../../src/queue/commands/commands.js';
import { inProcessQueue } from '../in-process.js';

// 2,000 messages move the clock 1.3 hours: waits fill second, minute and hour bins, runs second and
// minute bins, and the hourly counts two hours, which is every kind of bin the layout has below a day.
// RQ_STATS_MESSAGES=10000 runs the larger proof (6.6 hours of clock, seven hours' bins).
const N = Number(process.env.RQ_STATS_MESSAGES ?? 2_000);

/** The plan of message i: how each run ends (i % 10), and how long it runs (a spread over the qless bins, under half a day in all). */
const PLANS = ['done', 'done', 'done', 'done', 'done', 'err', 'exit', 'fatal', 'resend', 'relayed'] as const;
const runMs = (i: number, attempt: number) => (i % 97 === 0 ? 61_000 + i : ((i + attempt) * 37) % 3000);

/** Independent of the implementation: the bins qless's layout puts a value of seconds in. */
function expectedHistogram(values: number[]) {
  const h = { s: [0], m: [0], h: [0], d: [] as number[] };
  for (const v of values) {
    const [unit, i] =
      v < 60
        ? (['s', Math.floor(v)] as const)
        : v < 3600
          ? (['m', Math.floor(v / 60)] as const)
          : v < 86400
            ? (['h', Math.floor(v / 3600)] as const)
            : (['d', Math.floor(v / 86400)] as const);
    while (h[unit].length <= i) h[unit].push(0);
    h[unit][i]++;
  }
  return h;
}

function moments(values: number[]) {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
  return { count: values.length, mean, variance, min: Math.min(...values), max: Math.max(...values) };
}

const promBuckets = (values: number[]) => PROM_BUCKETS.map((b, i) => values.filter((v) => v <= b && (i === 0 || v > PROM_BUCKETS[i - 1])).length);

describe('queue statistics', () => {
  it(`equal the truth after ${N} messages with a known mix of outcomes and run times`, { timeout: 180_000 }, async () => {
    // On tmpfs when there is one: what is counted is the queue's statistics, not the disk's fsyncs (11,000 runs of them).
    const q = await inProcessQueue({ num_workers: 1 }, { tmpDir: fs.existsSync('/dev/shm') ? '/dev/shm' : undefined });
    try {
      const t0 = q.clock.ms;
      for (let i = 0; i < N; i += 250) await Promise.all(Array.from({ length: Math.min(250, N - i) }, (_, k) => q.send({ param1: String(i + k) })));
      const waits: number[] = [];
      const runs: number[] = [];
      const hourDone = Array(24).fill(0);
      const hourErr = Array(24).fill(0);
      const resentAt = new Map<string, number>();
      for (let k = 0; ; k++) {
        if (runs.length === N + N / 10) break;
        const s = await q.launcher.nth(k);
        const i = Number(s.env.RQ_PARAM1);
        const id = s.env.RQ_MSG_ID!;
        const again = resentAt.has(id);
        waits.push((q.clock.ms - (resentAt.get(id) ?? t0)) / 1000);
        const ms = runMs(i, again ? 1 : 0);
        q.clock.ms += ms;
        runs.push(ms / 1000);
        const plan = again ? 'done' : PLANS[i % 10];
        const finished = q.next('finished', ({ msg }) => msg.msg_id === id);
        if (plan === 'exit') s.exit(3);
        else {
          s.say(plan === 'fatal' ? 'fatal boom' : plan === 'resend' ? 'resend 0' : plan);
          s.exit(0);
        }
        await finished;
        const hour = new Date(q.clock.ms).getUTCHours();
        if (plan === 'resend') resentAt.set(id, q.clock.ms);
        else if (plan === 'done') hourDone[hour]++;
        else if (plan !== 'relayed') hourErr[hour]++;
      }
      const tenth = N / 10;
      const day = await q.queue.stats.reply();
      expect(day.date).toBe('20261125');
      expect({
        created: day.created,
        started: day.started,
        done: day.done,
        relayed: day.relayed,
        err: day.err,
        failures: day.failures,
        resends: day.resends,
        retries: day.retries,
      }).toEqual({
        created: N,
        started: N + tenth,
        done: 6 * tenth,
        relayed: tenth,
        err: 3 * tenth,
        failures: 2 * tenth,
        resends: tenth,
        retries: 0,
      });
      expect(day.outcomes).toMatchObject({ failed: 2 * tenth, fatal: tenth, exhausted: 0, cancelled: 0 });
      for (const [got, values] of [
        [day.wait, waits],
        [day.run, runs],
      ] as const) {
        const m = moments(values);
        expect(got.count).toBe(m.count);
        expect(got.min).toBeCloseTo(m.min, 6);
        expect(got.max).toBeCloseTo(m.max, 6);
        expect(got.mean).toBeCloseTo(m.mean, 6);
        expect(got.variance / m.variance).toBeCloseTo(1, 9);
        expect(got.histogram).toEqual(expectedHistogram(values));
      }
      expect(day.hourly).toEqual({ done: hourDone, err: hourErr });
      expect(day.live!.counts).toMatchObject({ que: 0, run: 0, done: 6 * tenth, relayed: tenth, err: 3 * tenth, err_acked: 0 });

      const totals = q.queue.stats.collector.cumulative();
      expect(totals.created).toBe(N);
      expect(totals.finished).toEqual({ done: 6 * tenth, relayed: tenth, err: expect.objectContaining({ failed: 2 * tenth, fatal: tenth }) });
      expect(totals.failures).toEqual({ err: tenth, exit: tenth });
      expect(totals.wait.buckets).toEqual(promBuckets(waits));
      expect(totals.run.buckets).toEqual(promBuckets(runs));
      expect(totals.run.count).toBe(runs.length);
      expect(totals.run.sum).toBeCloseTo(
        runs.reduce((a, b) => a + b, 0),
        6,
      );
    } finally {
      await q.close();
    }
  });

  it("retries counts a failed run sent back to the que by its retry policy, not an operator's requeue, even one whose actor is named retry", async () => {
    const q = await inProcessQueue({ num_workers: 1 });
    try {
      const figures = async () => ({ day: (await q.queue.stats.reply()).retries, total: q.queue.stats.collector.cumulative().retries });
      // a has a retry budget: its err goes back to the que for attempt 1 (after a backoff the clock never reaches).
      const a = await q.send({ param1: 'a', max_retries: 1 });
      const b = await q.send({ param1: 'b' });
      const retried = q.next('moved', ({ id, to }) => id === a.msg_id && to === 'que');
      const ra = await q.launcher.nth(0);
      ra.say('err flaky');
      ra.exit(0);
      expect(await retried).toMatchObject({ from: 'run', actor: 'retry' });
      expect(await figures()).toEqual({ day: 1, total: 1 });
      // b has none: its err ends it in err/, and an operator requeues it.
      const failed = q.next('finished', ({ msg }) => msg.msg_id === b.msg_id);
      const rb = await q.launcher.nth(1);
      rb.say('err broken');
      rb.exit(0);
      await failed;
      const requeued = q.next('moved', ({ id, to }) => id === b.msg_id && to === 'que');
      const reply = await handleRequest(q.queue, `requeue_message ${JSON.stringify({ msg_id: b.msg_id, actor: 'retry' })}`, pino({ level: 'silent' }));
      expect(JSON.parse(reply)).toEqual(['ok', 'msg requeued']);
      expect(await requeued).toMatchObject({ from: 'err', actor: 'retry' });
      expect(await figures()).toEqual({ day: 1, total: 1 });
    } finally {
      await q.close();
    }
  });
});
