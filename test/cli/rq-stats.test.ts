// rq stats and rq failed against a real queue process (rq-beyond §B15.3, §B15.4): key: value lines that
// match the queue's own stats reply, p50/p95/p99 read off its histograms, failure groups and their
// pages, and bad input refused in one line naming the option (exit 1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DayStats } from '../../src/ipc/stats-reply.js';
import { quantile } from '../../src/queue/observers/distribution.js';
import { type Run, expectOneLineError, runRq } from '../helpers/rq-cli.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc;
const ids: Record<string, string> = {};

const rq = (args: string[]): Promise<Run> => runRq(args, { root: t.root });

/** `key: value` lines as a map (every line must be one). */
function keyValues(r: Run): Map<string, string> {
  expect(r.code, r.err.join('\n')).toBe(0);
  const out = new Map<string, string>();
  for (const line of r.out) {
    const m = /^([a-z_0-9.]+): (.*)$/.exec(line);
    expect(m, line).not.toBeNull();
    out.set(m![1], m![2]);
  }
  return out;
}

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'sq');
  q = await QueueProc.start(t.root, 'sq');
  const plans: [string, Record<string, unknown>][] = [
    ['done1', { param1: 'done' }],
    ['done2', { param1: 'done' }],
    ['err', { param1: 'err' }],
    ['fatal', { param1: 'fatal', param2: 'bad input' }],
    ['value', { param1: 'retry', param2: 'ValueError: no such customer' }],
  ];
  for (const [name, fields] of plans) ids[name] = await q.send(fields);
  for (const id of Object.values(ids)) expect((await q.cmd('wait_message', { msg_id: id, timeout: 20 }))[0]).toBe('ok');
  await waitFor(async () => (await q.cmd('stats'))[1].run.count === plans.length, 'every run counted');
}, 60_000);

afterAll(async () => {
  await q?.stop();
  await t?.cleanup();
});

describe('rq stats', () => {
  it("prints the queue's stats as key: value lines, with p50/p95/p99 of wait and run", async () => {
    const lines = keyValues(await rq(['stats', 'sq']));
    const s: DayStats = (await q.cmd('stats'))[1];
    expect(lines.get('queue')).toBe('sq');
    expect(lines.get('date')).toBe(s.date);
    for (const k of ['created', 'started', 'done', 'err', 'failures', 'retries'] as const) expect(lines.get(k), k).toBe(String(s[k]));
    expect([lines.get('created'), lines.get('done'), lines.get('err')]).toEqual(['5', '2', '3']);
    expect(lines.get('outcomes.fatal')).toBe('1');
    expect(lines.get('live.counts.err')).toBe('3');
    expect(lines.get('hourly.done')!.split(',')).toHaveLength(24);
    for (const d of ['wait', 'run'] as const) {
      expect(lines.get(`${d}.count`)).toBe(String(s[d].count));
      for (const [p, v] of [
        ['p50', 0.5],
        ['p95', 0.95],
        ['p99', 0.99],
      ] as const) {
        const expected = quantile(s[d], v)!;
        expect(Number(lines.get(`${d}.${p}`)), `${d}.${p}`).toBeCloseTo(expected, 3);
      }
      // The qless bins stay in --json.
      expect([...lines.keys()].some((k) => k.startsWith(`${d}.histogram`))).toBe(false);
    }
  });

  it('--json prints the reply; --queue works as the other commands take it', async () => {
    const r = await rq(['stats', '--queue', 'sq', '--json']);
    expect(r.code).toBe(0);
    const s = JSON.parse(r.out.join('\n'));
    expect([s.queue, s.created, s.wait.histogram.s.length > 0]).toEqual(['sq', 5, true]);
  });

  it('--date gives a stored day (an empty one when nothing happened then), without live figures', async () => {
    const lines = keyValues(await rq(['stats', 'sq', '--date', '20200101']));
    expect([lines.get('date'), lines.get('created'), lines.get('wait.p50'), lines.has('live.counts.err')]).toEqual(['20200101', '0', 'none', false]);
  });

  it.each([
    [['stats'], /^rq: stats: expected a queue name \(rq stats <queue>\), received nothing$/],
    [['stats', 'sq', 'other'], /^rq: stats: unexpected argument "other": rq stats takes at most 1 word \(<queue>\); options are --name value$/],
    [['stats', 'sq', '--queue', 'other'], /^rq: the queue is named twice \("sq" and --queue "other"\)$/],
    [['stats', 'sq', '--date', '2026-11-21'], /^rq: --date: expected a UTC day as YYYYMMDD, such as 20261121, received "2026-11-21"$/],
    [['stats', 'sq', '--date', '20260230'], /^rq: --date: expected a UTC day as YYYYMMDD/],
    [['stats', 'sq', '--date'], /^rq: --date: expected a UTC day as YYYYMMDD, such as 20261121, received no value$/],
    [['stats', 'no/such'], /^rq: --queue: /],
    [['stats', 'nosuch'], /^rq: .*nosuch/],
  ])('refuses %j in one line naming what is wrong', async (args, text) => {
    expectOneLineError(await rq(args), text, text.source.includes('nosuch') ? 1 : 2);
  });
});

describe('rq failed', () => {
  it('lists the failure groups, most err messages first', async () => {
    const r = await rq(['failed', 'sq']);
    expect(r.code, r.err.join('\n')).toBe(0);
    const groups = (await q.cmd('failed'))[1].groups as Record<string, number>;
    expect(groups).toEqual({ err: 1, fatal: 1, ValueError: 1 });
    expect(r.out).toEqual(['ok 3', 'ValueError 1', 'err 1', 'fatal 1']);
    expect(JSON.parse((await rq(['failed', 'sq', '--json'])).out[0])).toEqual({ ValueError: 1, err: 1, fatal: 1 });
  });

  it("--group pages one group's messages: id, time, outcome, kind, last failure text", async () => {
    const r = await rq(['failed', 'sq', '--group', 'ValueError']);
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(r.out[0]).toBe('ok 1');
    expect(r.out[1]).toMatch(new RegExp(`^sq/${ids.value.replace(/\./g, '\\.')} \\S+ (failed|exhausted) retry ValueError: no such customer$`));
    expect(await rq(['failed', 'sq', '--group', 'ValueError', '--offset', '1'])).toMatchObject({ code: 0, out: ['ok 1'] });
    const page = JSON.parse((await rq(['failed', 'sq', '--group', 'fatal', '--limit', '5', '--json'])).out[0]);
    expect([page.total, page.messages[0].msg_id]).toEqual([1, ids.fatal]);
  });

  it.each([
    [['failed', 'sq', '--offset', '1'], /^rq: --offset: pages one group's messages; give --group G too/],
    [['failed', 'sq', '--limit', '5'], /^rq: --limit: pages one group's messages/],
    [['failed', 'sq', '--group', 'a b'], /^rq: --group: expected a failure group: .*, received "a b"$/],
    [['failed', 'sq', '--group', 'err', '--limit', '0'], /^rq: --limit: expected a whole number from 1 to 1000, received "0"$/],
    [['failed', 'sq', '--group', 'err', '--offset', '-1'], /^rq: --offset: expected a whole number from 0 to 10000000, received "-1"$/],
    [['failed'], /^rq: failed: expected a queue name \(rq failed <queue>\), received nothing$/],
  ])('refuses %j in one line naming the option', async (args, text) => {
    expectOneLineError(await rq(args), text, text.source.includes('nosuch') ? 1 : 2);
  });
});

describe('rq help', () => {
  it('lists stats and failed', async () => {
    const r = await runRq(['--help']);
    expect(r.out.filter((l) => /^ {2}(stats|failed) /.test(l))).toHaveLength(2);
    const stats = await runRq(['stats', '--help']);
    expect(stats.code).toBe(0);
    expect(stats.out).toContain('Usage: rq stats <queue> [options]');
    expect(stats.out).toContainEqual(expect.stringMatching(/^ {2}--date YYYYMMDD +the UTC day/));
    expect((await runRq(['failed', '-h'])).out).toContainEqual(expect.stringMatching(/^ {2}--group G +list this group's messages/));
  });
});
