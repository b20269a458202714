// The pieces of GET /metrics without daemons (rq-beyond §B16): families from a queue's `metrics` reply, rq-mgr's status and the limits table, written by prom-client and read back by a parser of the text format.
import { describe, expect, it } from 'vitest';
import { parseLimits } from '../../src/config/limits-config.js';
import { limitPatternOf } from '../../src/message/limit-key.js';
import type { LimitKeyStatus } from '../../src/ipc/mgr-client.js';
import { OUTCOMES, MEMORY_BUCKETS, PROM_BUCKETS, type QueueMetrics } from '../../src/ipc/stats-reply.js';
import { silentLogger } from '../../src/log.js';
import { CONTENT_TYPE, exposition } from '../../src/web/metrics/exposition.js';
import { limitFamilies, limitPattern } from '../../src/web/metrics/limit-families.js';
import { histogramSamples } from '../../src/web/metrics/metric-family.js';
import { mgrFamilies } from '../../src/web/metrics/mgr-families.js';
import { queueFamilies, queueUp } from '../../src/web/metrics/queue-families.js';
import { scrapeFamilies } from '../../src/web/metrics/scrape.js';
import type { MgrClient } from '../../src/ipc/mgr-client.js';
import type { QueueClient } from '../../src/ipc/queue-client.js';
import { parseScrape } from '../helpers/prom-text.js';

/** A queue's reply with every figure distinct, so a figure under the wrong label shows. */
function queueMetrics(queue: string, base: number): QueueMetrics {
  const buckets = PROM_BUCKETS.map((_, i) => (i % 3 === 0 ? base + i : 0));
  return {
    queue,
    status: 'PAUSE',
    live: {
      counts: { prep: base + 1, que: base + 2, run: base + 3, done: base + 4, relayed: base + 5, err: base + 6, err_acked: base + 7 },
      que: { delayed: base + 8, ready: base + 9, dependencies: base + 10, limit: base + 11, coalesced: base + 12 },
      oldest_ready_s: 4.25,
    },
    workers: 3,
    running_scripts: base + 3,
    totals: {
      created: base + 100,
      finished: {
        done: base + 50,
        relayed: base + 51,
        err: Object.fromEntries(OUTCOMES.map((o, i) => [o, base + 60 + i])) as QueueMetrics['totals']['finished']['err'],
      },
      failures: { err: base + 70, timeout: base + 71, brand_new_kind: 2 },
      retries: base + 80,
      resends: base + 81,
      interrupts: base + 82,
      wait: { buckets, sum: 123.5, count: buckets.reduce((a, b) => a + b, 0) + 4 },
      run: { buckets: PROM_BUCKETS.map(() => 0), sum: 0, count: 0 },
      run_cpu: { buckets: PROM_BUCKETS.map(() => 0), sum: 0, count: 0 },
      run_memory: { buckets: MEMORY_BUCKETS.map((_, i) => (i === 2 ? 4 : 0)), sum: 40 * 1024 * 1024, count: 4 },
    },
  };
}

const table = parseLimits({ reports: 2, 'api:*': 3, 'api:vip': 9, 'mail:*': 1 });
const holders = (n: number) => Array.from({ length: n }, (_, i) => ({ ref: `q/${i}`, queue: 'q', since: 0, granted_at: 0 }));
const waiting = (n: number) => Array.from({ length: n }, (_, i) => ({ ref: `q/w${i}`, queue: 'q', since: 0, position: i + 1 }));
const key = (concurrency: number, h: number, w: number, source: 'config' | 'message' = 'config'): LimitKeyStatus => ({
  concurrency,
  source,
  holders: holders(h),
  waiting: waiting(w),
});

describe('histogramSamples', () => {
  it('cumulates the per-bucket counts, +Inf and _count the count, _sum the sum', () => {
    const buckets = PROM_BUCKETS.map(() => 0);
    buckets[0] = 2;
    buckets[5] = 3;
    const s = histogramSamples('h', { queue: 'q' }, { buckets, sum: 7.5, count: 6 });
    const le = (x: string) => s.find((v) => v.labels.le === x)!.value;
    expect([le('0.005'), le('0.1'), le('0.25'), le('86400'), le('+Inf')]).toEqual([2, 2, 5, 5, 6]);
    expect(s.filter((v) => v.metricName === 'h_bucket')).toHaveLength(PROM_BUCKETS.length + 1);
    expect(s.find((v) => v.metricName === 'h_sum')).toEqual({ metricName: 'h_sum', labels: { queue: 'q' }, value: 7.5 });
    expect(s.find((v) => v.metricName === 'h_count')!.value).toBe(6);
  });

  it('never lets +Inf fall below a finite bucket, and reads what is not a number as 0', () => {
    const s = histogramSamples('h', {}, { buckets: [1, 'x' as unknown as number, 2], sum: NaN, count: 1 });
    expect(s.find((v) => v.labels.le === '+Inf')!.value).toBe(3);
    expect(s.find((v) => v.metricName === 'h_sum')!.value).toBe(0);
    expect(histogramSamples('h', {}, undefined).every((v) => v.value === 0)).toBe(true);
  });

  it('takes the bounds of a histogram kept in other units (peak memory in bytes)', () => {
    const s = histogramSamples('m', {}, { buckets: MEMORY_BUCKETS.map((_, i) => (i === 2 ? 4 : 0)), sum: 1, count: 4 }, MEMORY_BUCKETS);
    const le = (x: number) => s.find((v) => v.labels.le === String(x))!.value;
    expect([le(4 * 1024 * 1024), le(16 * 1024 * 1024), le(64 * 1024 ** 3)]).toEqual([0, 4, 4]);
  });
});

describe("a queue's families, written and parsed back", () => {
  it('carry every figure of the reply under its labels', async () => {
    const m = queueMetrics('alpha', 1000);
    const text = await exposition([...queueFamilies(m), ...queueFamilies(queueMetrics('beta', 2000)), queueUp('gamma', false)]);
    const p = parseScrape(text);
    const a = { queue: 'alpha' };
    expect(p.value('rq_queue_up', a)).toBe(1);
    expect(p.value('rq_queue_up', { queue: 'gamma' })).toBe(0);
    expect(p.seriesWith('queue', 'gamma')).toEqual(['rq_queue_up{queue="gamma"}']);
    expect(['UP', 'PAUSE', 'DOWN', 'SCRIPTERROR', 'DISK FULL'].map((status) => p.value('rq_queue_status', { queue: 'alpha', status }))).toEqual([
      0, 1, 0, 0, 0,
    ]);
    for (const [state, n] of Object.entries(m.live.counts)) expect(p.value('rq_queue_messages', { queue: 'alpha', state })).toBe(n);
    for (const [reason, n] of Object.entries(m.live.que)) expect(p.value('rq_queue_waiting_messages', { queue: 'alpha', reason })).toBe(n);
    expect(p.value('rq_queue_oldest_ready_seconds', a)).toBe(4.25);
    expect(p.value('rq_queue_workers', a)).toBe(3);
    expect(p.value('rq_queue_running_scripts', a)).toBe(1003);
    expect(p.value('rq_messages_created_total', a)).toBe(1100);
    expect(p.value('rq_messages_finished_total', { queue: 'alpha', state: 'done', outcome: '' })).toBe(1050);
    expect(p.value('rq_messages_finished_total', { queue: 'alpha', state: 'relayed', outcome: '' })).toBe(1051);
    for (const o of OUTCOMES) expect(p.value('rq_messages_finished_total', { queue: 'alpha', state: 'err', outcome: o })).toBe(m.totals.finished.err[o]);
    // Every kind of §B3.1 has a series from the start; a kind the web does not know yet still shows.
    expect(p.value('rq_message_failures_total', { queue: 'alpha', kind: 'err' })).toBe(1070);
    expect(p.value('rq_message_failures_total', { queue: 'alpha', kind: 'spawn' })).toBe(0);
    expect(p.value('rq_message_failures_total', { queue: 'alpha', kind: 'brand_new_kind' })).toBe(2);
    expect([p.value('rq_message_retries_total', a), p.value('rq_message_resends_total', a), p.value('rq_message_interrupts_total', a)]).toEqual([
      1080, 1081, 1082,
    ]);
    const wait = p.histogram('rq_message_wait_seconds', a)!;
    expect(wait.count).toBe(m.totals.wait.count);
    expect(wait.sum).toBe(123.5);
    let below = 0;
    PROM_BUCKETS.forEach((b, i) => {
      below += m.totals.wait.buckets[i];
      expect(wait.buckets[String(b)]).toBe(below);
    });
    expect(wait.buckets['+Inf']).toBe(m.totals.wait.count);
    expect(p.histogram('rq_message_run_seconds', { queue: 'beta' })!.count).toBe(0);
    // client_python names a counter's family without its _total.
    expect(p.families.get('rq_messages_created')!.type).toBe('counter');
    expect(p.families.get('rq_message_run_seconds')!.type).toBe('histogram');
    expect(p.families.get('rq_queue_up')!.samples).toHaveLength(3);
  });

  it('an unknown status still shows as the current one', async () => {
    const p = parseScrape(await exposition(queueFamilies({ ...queueMetrics('q', 0), status: 'LATER' })));
    expect(p.value('rq_queue_status', { queue: 'q', status: 'LATER' })).toBe(1);
    expect(p.value('rq_queue_status', { queue: 'q', status: 'UP' })).toBe(0);
  });

  it('is text format 0.0.4', () => {
    expect(CONTENT_TYPE).toBe('text/plain; version=0.0.4; charset=utf-8');
  });
});

describe("rq-mgr's families", () => {
  it("rq_up 1 and each queue's restarts; the web and timers workers are not queues", async () => {
    const p = parseScrape(
      await exposition(
        mgrFamilies(
          {
            a: { status: 'RUNNING', pid: 1, uptime: 1, restarts: 2 },
            b: { status: 'BACKOFF', pid: null, uptime: null, restarts: 5 },
            '[web]': { status: 'RUNNING', pid: 2, uptime: 1, restarts: 7 },
          },
          ['a', 'b'],
        ),
      ),
    );
    expect(p.value('rq_up')).toBe(1);
    expect(p.value('rq_queue_process_restarts_total', { queue: 'a' })).toBe(2);
    expect(p.value('rq_queue_process_restarts_total', { queue: 'b' })).toBe(5);
    expect(p.families.get('rq_queue_process_restarts')!.samples).toHaveLength(2);
  });

  it('rq_up 0 and nothing else when rq-mgr did not answer', () => {
    expect(mgrFamilies(null, ['a'])).toEqual([expect.objectContaining({ name: 'rq_up', values: [{ labels: {}, value: 0 }] })]);
  });
});

describe('limit families', () => {
  it("a key is reported under itself when exact, else under the first glob that matches, else its template's glob, else itself", () => {
    expect(limitPattern(table, 'reports')).toBe('reports');
    expect(limitPattern(table, 'api:vip', 'api:*')).toBe('api:vip');
    expect(limitPattern(table, 'api:acme')).toBe('api:*');
    expect(limitPattern(table, 'mail:x', 'm*')).toBe('mail:*');
    expect(limitPattern(table, 'tenant:7', 'tenant:*')).toBe('tenant:*');
    expect(limitPattern(table, 'tenant:7')).toBe('tenant:7');
  });

  it("a template's glob is the template with every {…} as *", () => {
    expect(limitPatternOf('api:{param1}')).toBe('api:*');
    expect(limitPatternOf('{queue}/{param2}:{param3}')).toBe('*/*:*');
    expect(limitPatternOf('reports')).toBeUndefined();
  });

  it('per-tenant keys add up under their glob; every entry of the file shows, idle ones at 0; a key with a quote is escaped', async () => {
    const status = {
      'api:acme': key(3, 3, 2),
      'api:beta': key(3, 1, 0),
      reports: key(2, 1, 4),
      'ad "hoc" \\ key': key(5, 2, 0, 'message'),
      'tenant:a': { ...key(1, 1, 3, 'message'), pattern: 'tenant:*' },
      'tenant:b': { ...key(1, 1, 0, 'message'), pattern: 'tenant:*' },
    };
    const p = parseScrape(await exposition(limitFamilies(table, status)));
    const of = (k: string) => [p.value('rq_limit_concurrency', { key: k }), p.value('rq_limit_in_use', { key: k }), p.value('rq_limit_waiting', { key: k })];
    expect(of('api:*')).toEqual([3, 4, 2]);
    expect(of('reports')).toEqual([2, 1, 4]);
    expect(of('api:vip')).toEqual([9, 0, 0]);
    expect(of('mail:*')).toEqual([1, 0, 0]);
    expect(of('ad "hoc" \\ key')).toEqual([5, 2, 0]);
    expect(of('tenant:*')).toEqual([1, 2, 3]);
    expect(p.value('rq_limit_in_use', { key: 'api:acme' })).toBeUndefined();
  });

  it('nothing when rq-mgr did not answer limit_status', () => {
    expect(limitFamilies(table, null)).toEqual([]);
  });
});

describe('scrapeFamilies', () => {
  const mgr = (restarts: number) =>
    ({
      status: async () => ({
        ok: true,
        value: {
          slow: { status: 'RUNNING', pid: 1, uptime: 1, restarts },
          fine: { status: 'RUNNING', pid: 2, uptime: 1, restarts: 0 },
          '[web]': { status: 'RUNNING', pid: 3, uptime: 1 },
        },
        raw: null,
      }),
      limitStatus: async () => ({ ok: true, value: {}, raw: null }),
      // A host in no fleet: no fleet family (test/fleet/ scrapes one that is).
      fleet: async () => ({ ok: false, code: 'RQ_ERR_NO_FLEET', text: 'no fleet', raw: null }),
    }) as unknown as MgrClient;

  it('a queue that does not answer within the timeout contributes only rq_queue_up 0; the others are not held up', async () => {
    const never = new Promise<never>(() => undefined);
    const queue = (name: string) =>
      ({ metrics: () => (name === 'slow' ? never : Promise.resolve({ ok: true, value: queueMetrics(name, 0), raw: null })) }) as unknown as QueueClient;
    const t0 = performance.now();
    const families = await scrapeFamilies({
      mgr: mgr(1),
      queue,
      discover: async () => [],
      limitsFile: '/nonexistent/limits.json',
      log: silentLogger(),
      timeoutMs: 50,
    });
    expect(performance.now() - t0).toBeLessThan(1000);
    const p = parseScrape(await exposition(families));
    expect(p.seriesWith('queue', 'slow')).toEqual(['rq_queue_process_restarts_total{queue="slow"}', 'rq_queue_up{queue="slow"}']);
    expect(p.value('rq_queue_up', { queue: 'fine' })).toBe(1);
    expect(p.value('rq_up')).toBe(1);
  });

  it('without rq-mgr: rq_up 0, and the queue directories are the queues asked', async () => {
    const down = {
      status: async () => Promise.reject(new Error('no socket')),
      limitStatus: async () => Promise.reject(new Error('no socket')),
      fleet: async () => Promise.reject(new Error('no socket')),
    } as unknown as MgrClient;
    const asked: string[] = [];
    const queue = (name: string) => ({ metrics: () => (asked.push(name), Promise.reject(new Error('no socket'))) }) as unknown as QueueClient;
    const p = parseScrape(
      await exposition(
        await scrapeFamilies({ mgr: down, queue, discover: async () => ['a', 'b'], limitsFile: '/nonexistent', log: silentLogger(), timeoutMs: 50 }),
      ),
    );
    expect(asked.sort()).toEqual(['a', 'b']);
    expect(p.value('rq_up')).toBe(0);
    expect([p.value('rq_queue_up', { queue: 'a' }), p.value('rq_queue_up', { queue: 'b' })]).toEqual([0, 0]);
    expect(p.families.has('rq_limit_concurrency')).toBe(false);
    expect(p.families.has('rq_fleet_member')).toBe(false);
  });
});
