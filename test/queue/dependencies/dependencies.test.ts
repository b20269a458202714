// Dependencies between messages of two real queue processes (rq-beyond §B8): waiting, the three failure policies, fan-in, undepend, refusals, and the outbox across a SIGKILL.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';

let t: TestRoot;
let a: QueueProc;
let b: QueueProc;

const later = () => Math.floor(Date.now() / 1000) + 3600;
const stdio = async (q: QueueProc, id: string) =>
  fs.readFile(path.join(t.root, (await q.cmd('get_message', { msg_id: id }))[1].path, 'job', 'stdio.log'), 'utf8');
const runs = async (q: QueueProc, id: string) =>
  ((await q.cmd('get_history', { msg_id: id }))[1] as { from?: string; to?: string }[]).filter((l) => l.from === 'que' && l.to === 'run').length;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'da', { num_workers: 4 });
  await addQueue(t.root, 'db', { num_workers: 4 });
  [a, b] = await Promise.all([QueueProc.start(t.root, 'da'), QueueProc.start(t.root, 'db')]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await t?.cleanup();
});

describe('a dependent waits for its dependency', () => {
  it('runs only once the dependency is done, and sees RQ_DEPENDS; both sides show the link', async () => {
    const x = await b.send({ param1: 'done', due: later() });
    const y = await a.send({ param1: 'env', depends: [`db/${x}`] });
    const waiting = (await a.cmd('get_message', { msg_id: y }))[1];
    expect(waiting).toMatchObject({ state: 'que', waiting: { reason: 'dependencies', waiting_on: [`db/${x}`] } });
    expect((await a.cmd('waiting', { reason: 'dependencies' }))[1]).toEqual([{ msg_id: y, reason: 'dependencies', waiting_on: [`db/${x}`] }]);
    expect((await b.cmd('get_message', { msg_id: x }))[1].dependents).toEqual([`da/${y}`]);
    expect(await b.cmd('run_message', { msg_id: x })).toEqual(['ok', 'msg sent to front of run queue']);
    const done = await a.waitState(y, ['done']);
    expect(done.depends_done).toEqual({ [`db/${x}`]: 'done' });
    expect(await stdio(a, y)).toContain(`RQ_DEPENDS=db/${x}=done\n`);
    const history = (await a.cmd('get_history', { msg_id: y }))[1];
    expect(history).toContainEqual(expect.objectContaining({ event: 'depends_resolved', ref: `db/${x}`, state: 'done' }));
  });

  it('a dependency already done, given as a full id of this host, resolves at once', async () => {
    const x = await b.send({ param1: 'done' });
    await b.waitState(x, ['done']);
    const full = (await b.cmd('get_message', { msg_id: x }))[1].orig_msg_id;
    const y = await a.send({ param1: 'done', depends: full });
    expect((await a.waitState(y, ['done'])).depends).toEqual([`db/${x}`]);
  });

  it('a dependency in the same queue works the same', async () => {
    const x = await a.send({ param1: 'slow', param2: '0.2' });
    const y = await a.send({ param1: 'done', depends: `da/${x}` });
    await a.waitState(y, ['done']);
    expect((await a.cmd('get_message', { msg_id: x }))[1].state).toBe('done');
  });
});

describe('a failed dependency, by policy', () => {
  it('fail (default): the dependent ends in err dependency_failed, and its own dependents after it', async () => {
    const x = await b.send({ param1: 'err', due: later() });
    const y = await a.send({ param1: 'done', depends: [`db/${x}`] });
    const z = await a.send({ param1: 'done', depends: [`da/${y}`] });
    await b.cmd('run_message', { msg_id: x });
    const ey = await a.waitState(y, ['err']);
    expect(ey).toMatchObject({ outcome: 'dependency_failed', status: `err - DEPENDENCY FAILED - db/${x} is err (failed)` });
    expect(await a.waitState(z, ['err'])).toMatchObject({
      outcome: 'dependency_failed',
      status: `err - DEPENDENCY FAILED - da/${y} is err (dependency_failed)`,
    });
    expect(await runs(a, y)).toBe(0);
  });

  it('run: the dependent runs, and RQ_DEPENDS shows the failure', async () => {
    const x = await b.send({ param1: 'err' });
    const y = await a.send({ param1: 'env', depends: [`db/${x}`], depends_fail: 'run' });
    await a.waitState(y, ['done']);
    expect(await stdio(a, y)).toContain(`RQ_DEPENDS=db/${x}=err:failed\n`);
  });

  it('wait: the dependent keeps waiting through the failure, and runs once the dependency is requeued and succeeds', async () => {
    const gate = path.join(t.root, 'gate-open');
    const x = await b.send({ param1: 'gate', param2: gate });
    await b.waitState(x, ['err']);
    const y = await a.send({ param1: 'done', depends: [`db/${x}`], depends_fail: 'wait' });
    // Registered on an err message: the reply is its state, and the dependent still waits.
    expect((await a.cmd('get_message', { msg_id: y }))[1].waiting).toEqual({ reason: 'dependencies', waiting_on: [`db/${x}`] });
    await fs.writeFile(gate, '');
    expect(await b.cmd('requeue_message', { msg_id: x })).toEqual(['ok', 'msg requeued']);
    await b.waitState(x, ['done']);
    await a.waitState(y, ['done']);
  });

  it('a deleted dependency fails its dependent with "no longer exists"', async () => {
    const x = await b.send({ param1: 'done', due: later() });
    const y = await a.send({ param1: 'done', depends: [`db/${x}`] });
    expect(await b.cmd('delete_message', { msg_id: x })).toEqual(['ok', 'msg deleted']);
    expect((await a.waitState(y, ['err'])).status).toBe(`err - DEPENDENCY FAILED - db/${x} no longer exists`);
  });
});

describe('undepend and cancel', () => {
  it('undepend of every ref lets the message run; of an unknown message or a message not waiting is refused', async () => {
    const x = await b.send({ param1: 'done', due: later() });
    const y = await a.send({ param1: 'done', depends: [`db/${x}`] });
    expect(await a.cmd('undepend', { msg_id: y, all: true })).toEqual(['ok', []]);
    const done = await a.waitState(y, ['done']);
    expect(done.depends).toBeUndefined();
    expect(await a.cmd('undepend', { msg_id: y, all: true })).toEqual(['fail', 'msg is not waiting on dependencies']);
    expect(await a.cmd('undepend', { msg_id: '20261121.1643.46.613.1', all: true })).toEqual(['fail', 'msg not found']);
    expect(await a.cmd('undepend', { msg_id: y })).toEqual(['fail', 'give depends or all, not both and not neither']);
  });

  it('a waiting message can be cancelled; its dependency finishing later is ignored', async () => {
    const x = await b.send({ param1: 'done', due: later() });
    const y = await a.send({ param1: 'done', depends: [`db/${x}`] });
    expect(await a.cmd('cancel_message', { msg_id: y })).toEqual(['ok', 'msg cancelled']);
    await b.cmd('run_message', { msg_id: x });
    await b.waitState(x, ['done']);
    // The outbox entry is gone once every dependent answered (here: ignored).
    await waitFor(async () => (await fs.readdir(path.join(t.root, 'queues', 'db', '.outbox')).catch(() => [])).length === 0, 'the outbox to empty');
    expect((await a.cmd('get_message', { msg_id: y }))[1]).toMatchObject({ state: 'err', outcome: 'cancelled' });
  });
});

describe('refusals: nothing is created', () => {
  it.each([
    [{}, 'depends: expected an array of message refs (<queue>/<id>) or a comma-separated string, received {}'],
    [[], 'depends: expected 1 to 1000 message refs, received []'],
    ['', 'depends: expected 1 to 1000 message refs, received ""'],
    [['x'], 'depends[0]: expected a message ref such as test/20261121.1643.46.613.2164022, received "x"'],
    [['db/20261121.1643.46.613.1'], 'depends[0]: no message db/20261121.1643.46.613.1'],
    [['nosuch/20261121.1643.46.613.1'], 'depends[0]: queue nosuch does not exist'],
    [
      ['http://other:3333/q/db/20261121.1643.46.613.1'],
      'depends[0]: only messages of this host can be depended on (or of another host of its fleet; config.json names none), received http://other:3333/q/db/20261121.1643.46.613.1',
    ],
    [Array.from({ length: 1001 }, (_, i) => `db/20261121.1643.46.613.${i + 1}`), 'depends: expected at most 1000 refs, received 1001'],
  ])('depends %#', async (depends, text) => {
    const before = (await a.cmd('num_messages')).que;
    expect(await a.cmd('create_message', { dest: 'da', param1: 'done', depends })).toEqual(['fail', text]);
    expect((await a.cmd('num_messages')).que).toBe(before);
  });

  it('depends_fail', async () => {
    expect(await a.cmd('create_message', { dest: 'da', depends_fail: 'skip' })).toEqual([
      'fail',
      'depends_fail: expected one of fail, run, wait, received "skip"',
    ]);
  });
});

describe('fan-in and crashes', () => {
  it('a dependant of 100 messages over 2 queues runs exactly once, after all of them, with the dependency queue SIGKILLed mid-way', async () => {
    const xs: string[] = [];
    for (let i = 0; i < 100; i++) {
      const q = i % 2 ? a : b;
      xs.push(`${q === a ? 'da' : 'db'}/${await q.send({ param1: 'done', due: later() })}`);
    }
    const y = await a.send({ param1: 'done', depends: xs });
    expect((await a.cmd('get_message', { msg_id: y }))[1].waiting.waiting_on).toHaveLength(100);
    for (const ref of xs) {
      const [qn, id] = ref.split('/');
      // Its new due is on disk before it can start: a start during the write made this fail, and a
      // kill then brought the message back due an hour later.
      expect(await (qn === 'da' ? a : b).cmd('run_message', { msg_id: id })).toEqual(['ok', 'msg sent to front of run queue']);
    }
    // Kill db while its messages finish, some of them between the rename and the notification.
    await waitFor(async () => (await b.cmd('num_messages')).done > 0, 'db to finish some');
    await b.kill9();
    b = await QueueProc.start(t.root, 'db');
    for (const ref of xs.filter((r) => r.startsWith('db/'))) await b.waitState(ref.split('/')[1], ['done'], 20_000);
    await a.waitState(y, ['done'], 20_000);
    expect(await runs(a, y)).toBe(1);
    const started = Date.parse(((await a.cmd('get_history', { msg_id: y }))[1] as { at: string; to?: string }[]).find((l) => l.to === 'run')!.at);
    for (const ref of xs) {
      const [qn, id] = ref.split('/');
      const h = (await (qn === 'da' ? a : b).cmd('get_history', { msg_id: id }))[1] as { at: string; to?: string }[];
      expect(await (qn === 'da' ? a : b).state(id)).toBe('done');
      // A kill between a rename and its history line leaves no line (history is not fsynced): only lines written are compared.
      const doneAt = h.find((l) => l.to === 'done')?.at;
      if (doneAt) expect(Date.parse(doneAt)).toBeLessThanOrEqual(started);
    }
  });

  it('an outbox entry left by a crash after the rename is sent at the next start; a stale one is dropped', async () => {
    const x = await b.send({ param1: 'done', due: later() });
    const y = await a.send({ param1: 'done', depends: [`db/${x}`] });
    await b.stop();
    // What a kill right after x's rename to done leaves: x in done, its entry in the outbox, y never told.
    const que = path.join(t.root, 'queues', 'db', 'que', x);
    const msg = JSON.parse(await fs.readFile(path.join(que, 'msg'), 'utf8'));
    const stamp = x.slice(0, 8);
    const doneDir = path.join(t.root, 'queues', 'db', 'done', stamp, x.slice(9, 11), x.slice(11, 13));
    await fs.mkdir(doneDir, { recursive: true });
    await fs.rename(que, path.join(doneDir, x));
    await fs.writeFile(path.join(doneDir, x, 'msg'), JSON.stringify(msg));
    const outbox = path.join(t.root, 'queues', 'db', '.outbox');
    await fs.mkdir(outbox, { recursive: true });
    await fs.writeFile(path.join(outbox, `${x}.json`), JSON.stringify({ id: x, state: 'done', dependents: [`da/${y}`], done: [] }));
    // And a stale one: its message is still in que (the crash came before the rename).
    const z = (await fs.readdir(path.join(t.root, 'queues', 'db', 'que')))[0];
    if (z) await fs.writeFile(path.join(outbox, `${z}.json`), JSON.stringify({ id: z, state: 'done', dependents: [`da/${y}`], done: [] }));
    b = await QueueProc.start(t.root, 'db');
    await a.waitState(y, ['done']);
    await waitFor(async () => (await fs.readdir(outbox)).length === 0, 'the outbox to empty');
  });

  it('a dependent queue restarted while waiting re-registers, and learns of a dependency that finished while it was down', async () => {
    const x = await b.send({ param1: 'done', due: later() });
    const y = await a.send({ param1: 'done', depends: [`db/${x}`] });
    await a.kill9();
    await b.cmd('run_message', { msg_id: x });
    await b.waitState(x, ['done']);
    a = await QueueProc.start(t.root, 'da');
    await a.waitState(y, ['done']);
    expect(await runs(a, y)).toBe(1);
  });
});
