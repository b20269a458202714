// Statistics on disk (rq-beyond §B15.2, §B15.4): what a restart keeps, what a crash may lose, the day boundary, retention, failure groups.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { handleRequest } from '../../../src/queue/commands/commands.js';
import pino from 'pino';
import { type InProcess, inProcessQueue } from '../in-process.js';

const open: InProcess[] = [];
afterEach(async () => {
  for (const q of open.splice(0)) await q.close();
});

async function start(config: Record<string, unknown> = {}, opts: { root?: string; clockMs?: number } = {}): Promise<InProcess> {
  const q = await inProcessQueue(config, opts);
  open.push(q);
  return q;
}

/** Runs `n` messages to the end the script gives each (`lines` on fd 3, then exit 0). */
async function runEach(q: InProcess, n: number, lines: (i: number) => string[] = () => ['done']): Promise<void> {
  for (let i = 0; i < n; i++) {
    // The queue is idle between messages: the next script started is this message's.
    const k = q.launcher.started.length;
    const msg = await q.send({ param1: String(i) });
    const s = await q.launcher.nth(k);
    const finished = q.next('finished', ({ msg: m }) => m.msg_id === msg.msg_id);
    s.say(...lines(i));
    s.exit(0);
    await finished;
  }
}

const ask = async (q: InProcess, command: string, arg: unknown = {}) =>
  JSON.parse(await handleRequest(q.queue, `${command} ${JSON.stringify(arg)}`, pino({ level: 'silent' })));
const statsDir = (q: InProcess) => path.join(q.root, 'queues', 'q', 'stats');
const readJson = async (file: string) => JSON.parse(await fs.readFile(file, 'utf8'));

describe('statistics on disk', () => {
  it('a restart carries today and the totals on; a crash loses only what the last flush had not written', async () => {
    const q1 = await start();
    await runEach(q1, 5);
    await q1.queue.stats.flush();
    const files = await fs.readdir(statsDir(q1));
    expect(files.sort()).toEqual(['20261125.json', 'totals.json']);
    const atCrash = await Promise.all(files.map(async (f) => [f, await fs.readFile(path.join(statsDir(q1), f))] as const));
    await runEach(q1, 3);
    await q1.stop();
    expect((await readJson(path.join(statsDir(q1), '20261125.json'))).done).toBe(8);
    // What a kill -9 after the first flush would have left on disk.
    for (const [f, data] of atCrash) await fs.writeFile(path.join(statsDir(q1), f), data);
    open.splice(open.indexOf(q1), 1);
    const q2 = await start({}, { root: q1.root, clockMs: q1.clock.ms });
    expect((await q2.queue.stats.reply()).done).toBe(5);
    await runEach(q2, 1);
    const day = await q2.queue.stats.reply();
    expect({ created: day.created, done: day.done, started: day.started }).toEqual({ created: 6, done: 6, started: 6 });
    expect(day.live!.counts.done).toBe(9);
    expect(day.live!.oldest_ready_s).toBe(0);
    expect(q2.queue.stats.collector.cumulative().finished.done).toBe(6);
  });

  it('a new UTC day starts a new record; the ended one is kept on disk and answered by date', async () => {
    const q = await start();
    await runEach(q, 2);
    q.clock.ms = Date.UTC(2026, 10, 26, 0, 0, 1);
    await runEach(q, 1, () => ['err']);
    await q.queue.stats.flush();
    const today = await ask(q, 'stats');
    expect(today[1]).toMatchObject({ date: '20261126', created: 1, done: 0, err: 1 });
    const yesterday = await ask(q, 'stats', { date: '20261125' });
    expect(yesterday[1]).toMatchObject({ date: '20261125', created: 2, done: 2, err: 0 });
    expect(yesterday[1].live).toBeUndefined();
    expect((await ask(q, 'stats', { date: '20260101' }))[1]).toMatchObject({ date: '20260101', created: 0 });
    expect(q.queue.stats.collector.cumulative()).toMatchObject({ created: 3, finished: { done: 2 } });
  });

  it('prunes at the first flush of a day: past stats_history_days deleted, past histogram_history_days without histograms', async () => {
    const q = await start();
    const dir = statsDir(q);
    await fs.mkdir(dir, { recursive: true });
    const old = { created: 4, wait: { count: 1, mean: 1, variance: 0, min: 1, max: 1, histogram: { s: [0, 1], m: [0], h: [0], d: [] } }, run: { count: 0 } };
    for (const day of ['20261025', '20261026', '20261117', '20261118', '20261124']) await fs.writeFile(path.join(dir, `${day}.json`), JSON.stringify(old));
    await runEach(q, 1);
    await q.queue.stats.flush();
    // Today is 20261125; 30 days of statistics, 7 of histograms (the defaults).
    expect((await fs.readdir(dir)).sort()).toEqual(['20261026.json', '20261117.json', '20261118.json', '20261124.json', '20261125.json', 'totals.json']);
    expect((await readJson(path.join(dir, '20261117.json'))).wait.histogram).toBeUndefined();
    expect((await readJson(path.join(dir, '20261118.json'))).wait.histogram).toEqual(old.wait.histogram);
    const trimmed = (await ask(q, 'stats', { date: '20261117' }))[1];
    expect(trimmed).toMatchObject({ created: 4, wait: { count: 1, histogram: { s: [0], m: [0], h: [0], d: [] } } });
  });

  it('damaged files count as empty statistics, never stop the queue', async () => {
    const q1 = await start();
    await fs.mkdir(statsDir(q1), { recursive: true });
    await fs.writeFile(path.join(statsDir(q1), '20261125.json'), '{"created": "many", "done": 3, "wait": [1]');
    await fs.writeFile(path.join(statsDir(q1), 'totals.json'), 'null');
    await q1.stop();
    open.splice(open.indexOf(q1), 1);
    const q2 = await start({}, { root: q1.root });
    await runEach(q2, 1);
    expect(await q2.queue.stats.reply()).toMatchObject({ created: 1, done: 1 });
  });

  it('refuses a bad date or group naming the field, and changes nothing', async () => {
    const q = await start();
    expect(await ask(q, 'stats', { date: '20261131' })).toEqual(['fail', expect.stringMatching(/date.*YYYYMMDD.*20261131/)]);
    expect(await ask(q, 'stats', { date: 20261125 })).toEqual(['fail', expect.stringMatching(/date/)]);
    expect(await ask(q, 'failed', { group: 'two words' })).toEqual(['fail', expect.stringMatching(/group.*failure group.*two words/)]);
    expect(await ask(q, 'failed', { limit: 5 })).toEqual(['fail', expect.stringMatching(/group/)]);
    expect(await ask(q, 'requeue_errs', { group: 'a:b' })).toEqual(['fail', expect.stringMatching(/group/)]);
  });
});

describe('failure groups', () => {
  it('group err messages by outcome, error class or failure kind; follow moves; requeue one group', async () => {
    const q = await start({ retry: { max_retries: 0 } });
    await runEach(q, 6, (i) =>
      i < 3 ? ['run ValueError: bad input', 'err ValueError: bad input'] : i < 5 ? ['err HTTP503: upstream down'] : ['fatal no such customer'],
    );
    expect((await ask(q, 'failed'))[1]).toEqual({ groups: { ValueError: 3, HTTP503: 2, fatal: 1 } });
    const page = (await ask(q, 'failed', { group: 'ValueError', limit: 2 }))[1];
    expect(page.total).toBe(3);
    expect(page.messages).toHaveLength(2);
    expect(page.messages[0].msg_id > page.messages[1].msg_id).toBe(true);
    // Moves after the first build are followed without reading the whole err/ again.
    await runEach(q, 1, () => ['err ValueError: again']);
    expect((await ask(q, 'failed'))[1].groups.ValueError).toBe(4);
    expect(await ask(q, 'requeue_errs', { group: 'HTTP503' })).toEqual(['ok', 2]);
    expect((await ask(q, 'failed'))[1]).toEqual({ groups: { ValueError: 4, fatal: 1 } });
    expect(await ask(q, 'ack_errs')).toEqual(['ok', 5]);
    expect((await ask(q, 'failed'))[1]).toEqual({ groups: {} });
    expect((await q.queue.stats.reply()).live!.counts).toMatchObject({ err: 0, err_acked: 5 });
  });
});

describe('failure groups and acknowledgement', () => {
  it('drop only the messages acknowledged: one that failed while the ack ran keeps its group', async () => {
    const q = await start();
    await runEach(q, 2, () => ['err KeyError: k']);
    const [first, second] = (await q.queue.stats.groups.page('KeyError', 0, 10)).messages.map((m) => m.msg_id).sort();
    // What ack_errs tells when its listing saw only the first: the second failed meanwhile.
    q.queue.events.emit('acked', { ids: [first] });
    expect(await q.queue.stats.groups.ids('KeyError')).toEqual(new Set([second]));
  });
});

describe('failure groups after a failed build', () => {
  it('forget what they heard during it: a message that failed then and has left err since is in no group', async () => {
    const q = await start({ retry: { max_retries: 0 } });
    const spool = q.queue.spool as unknown as { listFlat: (...args: unknown[]) => Promise<string[]> };
    const real = spool.listFlat.bind(spool);
    let fail!: (err: Error) => void;
    spool.listFlat = () => new Promise((_, reject) => (fail = reject));
    const first = q.queue.stats.groups.groups();
    await expect.poll(() => fail).toBeDefined();
    // Heard while the build waits: the message's move to err, its fields read then.
    await runEach(q, 1, () => ['err KeyError: k']);
    fail(Object.assign(new Error('no more descriptors'), { code: 'EMFILE' }));
    await expect(first).rejects.toThrow('no more descriptors');
    spool.listFlat = real;
    // Requeued while no build runs (nothing is kept then): the next build reads err/ as it is now.
    expect(await ask(q, 'requeue_errs')).toEqual(['ok', 1]);
    expect((await ask(q, 'failed'))[1]).toEqual({ groups: {} });
  });
});
