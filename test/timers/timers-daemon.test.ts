// The timers process end to end: real timers and queue processes in a temp root, timer files as symlinks.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rootPaths } from '../../src/config/paths.js';
import { request } from '../../src/ipc/socket-client.js';
import { idTime } from '../../src/message/message-id.js';
import { backoffDelay } from '../../src/backoff.js';
import { DELIVERY_BACKOFF } from '../../src/timers/timer-table.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';
import { TimersProc, linkTimer } from './timers-proc.js';
import { budget } from '../helpers/time-budget.js';

let t: TestRoot;
let timers: TimersProc | undefined;
let queues: QueueProc[] = [];

beforeEach(async () => {
  t = await makeRoot();
});
afterEach(async () => {
  await timers?.stop();
  timers = undefined;
  await Promise.all(queues.map((q) => q.stop()));
  queues = [];
  await t.cleanup();
});

/** A queue that keeps what it gets in que (paused), so every timer message can be inspected. */
async function pausedQueue(name: string): Promise<QueueProc> {
  await addQueue(t.root, name);
  const q = await QueueProc.start(t.root, name);
  await fs.writeFile(q.paths.pauseFile, '');
  await waitFor(async () => (await q.cmd('status'))[0] === 'PAUSE', `${name} to pause`);
  queues.push(q);
  return q;
}

interface Got {
  id: string;
  /** Due as stored, in ms. */
  due: number;
  /** When the queue created it (from the id), in ms. */
  created: number;
  src: unknown;
  param1: unknown;
}

async function received(q: QueueProc): Promise<Got[]> {
  const list = (await q.cmd('messages', { state: 'que', limit: 1000 })) as [string, number][];
  const out: Got[] = [];
  for (const [id, due] of list) {
    const msg = (await q.cmd('get_message', { msg_id: id }))[1];
    out.push({ id, due: Number(due) * 1000, created: idTime(id)!, src: msg.src, param1: msg.param1 });
  }
  return out.sort((a, b) => a.due - b.due);
}

async function receivedAtLeast(q: QueueProc, n: number, timeoutMs = 15_000): Promise<Got[]> {
  return waitFor(
    async () => {
      const got = await received(q);
      return got.length >= n ? got : false;
    },
    `${n} timer messages in ${q.name}`,
    timeoutMs,
    50,
  );
}

/**
 * "Nothing more came" needs a point in the daemon's own time: links a marker timer firing every
 * second into the same timer table and waits for its message due at or after `horizon` (ms). By
 * then the table has sent everything that was due before it.
 */
async function markerPassed(q: QueueProc, horizon: number): Promise<void> {
  await linkTimer(t.root, 'marker.json', { period: 1, msg: { dest: q.name, param1: 'marker' } });
  await waitFor(async () => (await received(q)).some((m) => m.param1 === 'marker' && m.due >= horizon), 'the marker timer to pass the horizon', 20_000, 100);
}

const notMarker = (got: Got[]) => got.filter((m) => m.param1 !== 'marker');

/** Created within 500 ms of its occurrence: a fire a period late fails, a loop held 100-odd ms by a loaded machine does not. */
function expectOnTime(got: Got[]): void {
  for (const g of got) {
    expect(g.created - g.due, `message ${g.id} created ${g.created - g.due} ms after its due`).toBeGreaterThanOrEqual(-5);
    expect(g.created - g.due, `message ${g.id} created ${g.created - g.due} ms after its due`).toBeLessThan(budget(500));
  }
}

describe('timers process', () => {
  it('fires a new timer once right away, then every period from then on, on time', async () => {
    const q = await pausedQueue('tq');
    timers = await TimersProc.start(t.root);
    const linkedAt = Date.now();
    await linkTimer(t.root, 'tick.json', { period: 2, msg: { dest: 'tq', param1: 'hello' } });

    const got = await receivedAtLeast(q, 3);
    // The first fire is the moment the link was seen; no second immediate fire (spec §16.4).
    expect(got[0].due - linkedAt).toBeGreaterThanOrEqual(0);
    expect(got[0].due - linkedAt).toBeLessThan(budget(1000));
    // Drift-free: t0 + k·period exactly, whatever the lateness of each fire.
    got.forEach((g, k) => expect(Math.round(g.due - got[0].due)).toBe(k * 2000));
    expectOnTime(got);
    expect(got.every((g) => g.src === 'timer:tick' && g.param1 === 'hello')).toBe(true);

    const [[name, due]] = await timers.timers();
    expect(name).toBe('tick');
    expect(due * 1000).toBeGreaterThan(got[got.length - 1].due);
    // The queue shows a message before the daemon has read its `ok` and counted the send.
    await waitFor(async () => (await timers!.status()).sent >= 3, 'the daemon to count three deliveries');
    expect((await timers.status()).errors).toBe(0);
  });

  it('sends a timer linked before the process started, with its own src', async () => {
    const q = await pausedQueue('tq');
    await linkTimer(t.root, 'early.json', { period: 3600, msg: { dest: 'tq', src: 'nightly', param2: 7 } });
    const before = Date.now();
    timers = await TimersProc.start(t.root);
    const [g] = await receivedAtLeast(q, 1);
    expect(g.src).toBe('nightly');
    expect(g.due).toBeGreaterThanOrEqual(before);
    expect((await q.cmd('get_message', { msg_id: g.id }))[1].param2).toBe('7');
    const [[name, due]] = await timers.timers();
    expect(name).toBe('early');
    expect(Math.round(due * 1000 - g.due)).toBe(3600_000);
  });

  it('replaces an edited definition without a double or extra fire, and moves the schedule only when the period changes', async () => {
    const q = await pausedQueue('tq');
    timers = await TimersProc.start(t.root);
    const def = await linkTimer(t.root, 'edit.json', { period: 3, msg: { dest: 'tq', param1: 'v1' } });
    const [first] = await receivedAtLeast(q, 1);

    // In-place edit and an atomic replace of the target, same period: same schedule, new content.
    await fs.writeFile(def, JSON.stringify({ period: 3, msg: { dest: 'tq', param1: 'v2' } }));
    const edits = async () => (await timers!.logLines()).filter((l) => l.msg === 'timer changed' || l.msg === 'timer valid again; resumes its schedule').length;
    await waitFor(async () => (await edits()) >= 1, 'the edit to be seen');
    await fs.writeFile(`${def}.tmp`, JSON.stringify({ period: 3, msg: { dest: 'tq', param1: 'v3' } }));
    await fs.rename(`${def}.tmp`, def);
    // An atomic replace right after an edit: chokidar alone loses this one (see target-watch.ts).
    await waitFor(async () => (await edits()) >= 2, 'the replace to be seen');
    const afterEdit = await received(q);
    expect(afterEdit).toHaveLength(1);

    const got = await receivedAtLeast(q, 2);
    expect(got).toHaveLength(2);
    expect(Math.round(got[1].due - first.due)).toBe(3000);
    expect(got[1].param1).toBe('v3');
    expectOnTime(got);

    // A new period counts from the last fire: next = last fire + 5 s.
    await fs.writeFile(def, JSON.stringify({ period: 5, msg: { dest: 'tq', param1: 'v4' } }));
    await waitFor(async () => {
      const [[, due]] = await timers!.timers();
      return Math.round(due * 1000 - got[1].due) === 5000;
    }, 'the new period to apply');
    const more = await receivedAtLeast(q, 3);
    expect(more).toHaveLength(3);
    expect(Math.round(more[2].due - got[1].due)).toBe(5000);
    expect(more[2].param1).toBe('v4');
    expectOnTime(more);
  });

  it('forgets a timer whose link is removed', async () => {
    const q = await pausedQueue('tq');
    timers = await TimersProc.start(t.root);
    await linkTimer(t.root, 'gone.json', { period: 1, msg: { dest: 'tq' } });
    await receivedAtLeast(q, 1);
    await fs.unlink(path.join(rootPaths(t.root).timers, 'gone.json'));
    await waitFor(async () => (await timers!.timers()).length === 0, 'the timer to be forgotten');
    const before = await received(q);
    // Two periods of the removed timer, plus one so a send from an earlier pass has landed.
    await markerPassed(q, Date.now() + 3000);
    expect(notMarker(await received(q))).toEqual(before);
  });

  it('retries an occurrence a DOWN queue refused and delivers it once the queue is UP', async () => {
    const q = await pausedQueue('tq');
    await fs.writeFile(q.paths.downFile, '');
    await waitFor(async () => (await q.cmd('status'))[0] === 'DOWN', 'tq to be DOWN');
    timers = await TimersProc.start(t.root);
    await linkTimer(t.root, 'retry.json', { period: 60, msg: { dest: 'tq', param1: 'late' } });
    await waitFor(async () => (await timers!.status()).errors >= 2, 'two failed attempts', 10_000, 50);
    const [[, due]] = await timers.timers();

    await fs.rm(q.paths.downFile);
    const [g] = await receivedAtLeast(q, 1, 15_000);
    // The retried message carries its occurrence as due, not the time of the retry.
    expect(Math.round(g.due - (due * 1000 - 60_000))).toBe(0);
    expect(g.created - g.due).toBeGreaterThan(1000);
    // Counted once the daemon has read the queue's `ok`, which may come after the message shows.
    const st = await waitFor(async () => {
      const now = await timers!.status();
      return now.sent > 0 ? now : false;
    }, 'the daemon to count the delivery');
    expect(st.sent).toBe(1);
    expect(st.errors).toBeGreaterThanOrEqual(2);
    // Log lines are written in the background: the one of the delivery may follow the count.
    const sent = await waitFor(async () => (await timers!.logLines()).find((l) => l.msg === 'timer message sent'), 'the delivery to be logged');
    const logs = await timers.logLines();
    expect(logs.some((l) => l.msg === 'timer message not delivered; will retry' && String(l.error).includes('status: DOWN'))).toBe(true);
    // Never two messages for one occurrence: a second one could only come from a retry left behind,
    // due at most one back-off step after the delivery (plus a period, so a send from an earlier pass has landed).
    expect(sent?.attempt).toEqual(expect.any(Number));
    await markerPassed(q, g.created + backoffDelay(Number(sent?.attempt), DELIVERY_BACKOFF) + 1000);
    expect(notMarker(await received(q))).toEqual([g]);
  }, 45_000);

  it('holds a delivery to a queue that is not up yet until it answers: no failure, no warning', async () => {
    await addQueue(t.root, 'tq');
    await fs.writeFile(path.join(t.root, 'config', 'tq.pause'), '');
    timers = await TimersProc.start(t.root);
    await linkTimer(t.root, 'early.json', { period: 60, msg: { dest: 'tq', param1: 'early' } });
    await waitFor(async () => (await timers!.logLines()).some((l) => l.msg === 'timer added; fires now'), 'the timer to fire');
    const upFrom = Date.now();
    const q = await QueueProc.start(t.root, 'tq');
    queues.push(q);
    const [g] = await receivedAtLeast(q, 1);
    // Fired before the queue was started (in the same millisecond at the latest: the fire's log line is seen at once), created by it afterwards: the one delivery waited.
    expect(g.due).toBeLessThanOrEqual(upFrom);
    expect(g.created).toBeGreaterThanOrEqual(upFrom);
    const st = await waitFor(async () => ((await timers!.status()).sent === 1 ? timers!.status() : false), 'the delivery to be counted');
    expect(st.errors).toBe(0);
    await waitFor(async () => (await timers!.logLines()).some((l) => l.msg === 'timer message sent'), 'the delivery to be logged');
    expect((await timers.logLines()).filter((l) => Number(l.level) >= 40)).toEqual([]);
  }, 45_000);

  it('counts deliveries to a missing queue as errors and keeps running', async () => {
    timers = await TimersProc.start(t.root);
    await linkTimer(t.root, 'lost.json', { period: 30, msg: { dest: 'nosuchq' } });
    await waitFor(async () => (await timers!.status()).errors >= 1, 'a failed attempt');
    // Log lines are written in the background: the count may come first.
    await waitFor(async () => (await timers!.logLines()).some((l) => String(l.error).includes('queue nosuchq not found')), 'the failure to be logged');
    expect(timers.alive()).toBe(true);
  });

  it('refuses bad timer files with file, field and reason, and counts them', async () => {
    timers = await TimersProc.start(t.root);
    const dir = rootPaths(t.root).timers;
    await linkTimer(t.root, 'nojson.json', '{"period": 5,');
    await linkTimer(t.root, 'nodest.json', { period: 5, msg: { param1: 'x' } });
    await linkTimer(t.root, 'zero.json', { period: 0, msg: { dest: 'q' } });
    await linkTimer(t.root, 'badq.json', { period: 5, msg: { dest: 'no such queue' } });
    await linkTimer(t.root, 'block.yaml', 'period: 5\nmsg:\n  dest: q\n');
    await fs.writeFile(path.join(dir, 'plain.json'), JSON.stringify({ period: 5, msg: { dest: 'q' } }));
    await fs.symlink(path.join(t.root, 'defs', 'missing.json'), path.join(dir, 'dangling.json'));
    // Not a timer name (two dots): ignored, not counted.
    await linkTimer(t.root, 'two.dots.json', { period: 5, msg: { dest: 'q' } });

    await waitFor(async () => (await timers!.status()).invalid >= 7, '7 refusals', 10_000, 50);
    expect(await timers.timers()).toEqual([]);
    const refusals = async () => (await timers!.logLines()).filter((l) => l.msg === 'timer file refused').map((l) => String(l.error));
    const errors = await waitFor(async () => ((await refusals()).length >= 7 ? refusals() : false), 'the 7 refusals to be logged');
    const about = (file: string) => errors.find((e) => e.startsWith(`timers/${file}:`)) ?? `nothing about ${file}`;
    expect(about('nojson.json')).toMatch(/^timers\/nojson\.json: not valid JSON/);
    expect(about('nodest.json')).toContain('msg.dest: expected a destination queue name or http:// URL');
    expect(about('zero.json')).toBe('timers/zero.json: period: expected a whole number of seconds >= 1, received 0');
    expect(about('badq.json')).toBe('timers/badq.json: msg.dest: expected a local queue name, an http(s):// URL or fleet:<queue>, received "no such queue"');
    expect(about('block.yaml')).toContain('YAML timer files are read only when written in JSON syntax');
    expect(about('plain.json')).toContain('not a symlink');
    expect(about('dangling.json')).toContain('cannot read: no such file');
    expect(errors.some((e) => e.includes('two.dots'))).toBe(false);
    const st = await timers.status();
    expect(st).toEqual({ sent: 0, errors: 0, invalid: 7 });

    // Fixing a file makes it a timer; refusals are not counted twice for repeated events.
    await addQueue(t.root, 'q');
    await fs.writeFile(path.join(t.root, 'defs', 'zero.json'), JSON.stringify({ period: 600, msg: { dest: 'q' } }));
    // The target of the dangling link appears: seen through the target directory's watch.
    await fs.writeFile(path.join(t.root, 'defs', 'missing.json'), JSON.stringify({ period: 600, msg: { dest: 'q' } }));
    await waitFor(async () => (await timers!.timers()).length === 2, 'the fixed timers');
    expect((await timers.timers()).map(([name]) => name).sort()).toEqual(['dangling', 'zero']);
    expect((await timers.status()).invalid).toBe(7);
  });

  it('refuses periods under 60 s unless RQ_ENV=test', async () => {
    timers = await TimersProc.start(t.root, { RQ_ENV: 'production' });
    await linkTimer(t.root, 'fast.json', { period: 5, msg: { dest: 'q' } });
    await waitFor(async () => (await timers!.status()).invalid === 1, 'the refusal');
    const line = await waitFor(async () => (await timers!.logLines()).find((l) => l.msg === 'timer file refused'), 'the refusal to be logged');
    expect(line?.error).toBe('timers/fast.json: period: expected a whole number of seconds >= 60, received 5');
    expect(await timers.timers()).toEqual([]);
  });

  it('answers unknown commands and malformed requests with an error and stays up', async () => {
    timers = await TimersProc.start(t.root);
    expect(await timers.cmd('bogus', { x: 1 })).toEqual(['error', 'unknown command: bogus']);
    const raw = await request(rootPaths(t.root).timersSock, 'rq2', 'not json', { timeoutMs: 5000 });
    expect(JSON.parse(raw)[0]).toBe('error');
    const notArray = await request(rootPaths(t.root).timersSock, 'rq2', '{"cmd":"get_status"}', { timeoutMs: 5000 });
    expect(JSON.parse(notArray)[0]).toBe('error');
    expect(await timers.cmd('get_status')).toEqual(['ok', { sent: 0, errors: 0, invalid: 0 }]);
    expect(await timers.cmd('get_timers')).toEqual(['ok', []]);
    expect(timers.alive()).toBe(true);
  });
});
