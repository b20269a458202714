// Tags on a real queue process (rq-beyond §B9): set at create and later in any state, lookup, counts, the index journal, cancel by tag, RQ_TAGS.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pidInFile } from '../../helpers/process-groups.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc;

const later = () => Math.floor(Date.now() / 1000) + 3600;
const journal = () => path.join(t.root, 'queues', 'tq', '.index', 'tags.jsonl');
const journalLines = async () =>
  (await fs.readFile(journal(), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'tq', { num_workers: 2, extra: { kill_grace: 0.3 } });
  q = await QueueProc.start(t.root, 'tq');
});
afterAll(async () => {
  await q?.stop();
  await t?.cleanup();
});

describe('tags at create', () => {
  it('keeps the given order, drops duplicates, accepts a comma-separated string, and journals before answering', async () => {
    const id = await q.send({ param1: 'done', due: later(), tags: 'b,a,b' });
    expect((await q.cmd('get_message', { msg_id: id }))[1].tags).toEqual(['b', 'a']);
    expect(await journalLines()).toContainEqual(expect.objectContaining({ id, add: ['b', 'a'] }));
  });

  it('an untagged create writes no journal line', async () => {
    const before = await journalLines();
    const id = await q.send({ param1: 'done', due: later() });
    expect((await q.cmd('get_message', { msg_id: id }))[1].tags).toBeUndefined();
    expect(await journalLines()).toEqual(before);
  });

  it.each([
    [42, 'tags: expected an array of tags or a comma-separated string, received 42'],
    [['ok', 'a b'], 'tags[1]: expected a tag of 1-64 characters from A-Z a-z 0-9 . _ : @ + - (starting with a letter or digit), received "a b"'],
    [Array.from({ length: 40 }, (_, i) => `t${i}`), 'tags: expected at most 32 tags, received 40'],
    [['x/y'], 'tags[0]: expected a tag of 1-64 characters from A-Z a-z 0-9 . _ : @ + - (starting with a letter or digit), received "x/y"'],
  ])('refuses %j and creates nothing', async (tags, text) => {
    const before = (await q.cmd('num_messages')).que;
    expect(await q.cmd('create_message', { dest: 'tq', param1: 'done', tags })).toEqual(['fail', text]);
    expect((await q.cmd('num_messages')).que).toBe(before);
  });

  it('the script sees RQ_TAGS', async () => {
    const id = await q.send({ param1: 'env', tags: ['red', 'blue'] });
    await q.waitState(id, ['done']);
    const log = await fs.readFile(path.join(t.root, (await q.cmd('get_message', { msg_id: id }))[1].path, 'job', 'stdio.log'), 'utf8');
    expect(log).toContain('RQ_TAGS=red,blue\n');
  });
});

describe('tag_message in every state', () => {
  it('changes a queued message durably, with a history line, and the index follows', async () => {
    const id = await q.send({ param1: 'done', due: later(), tags: ['one'] });
    expect(await q.cmd('tag_message', { msg_id: id, add: 'two,one', remove: ['one'], actor: 'test' })).toEqual(['ok', ['two']]);
    const msg = JSON.parse(await fs.readFile(path.join(t.root, 'queues', 'tq', 'que', id, 'msg'), 'utf8'));
    expect(msg.tags).toEqual(['two']);
    const history = (await q.cmd('get_history', { msg_id: id }))[1];
    expect(history.at(-1)).toMatchObject({ event: 'tags', actor: 'test', add: ['two'], remove: ['one'] });
    expect((await q.cmd('tagged', { tag: 'one' }))[1].messages.map((m: { msg_id: string }) => m.msg_id)).not.toContain(id);
    expect((await q.cmd('tagged', { tag: 'two' }))[1].messages[0]).toMatchObject({ msg_id: id, state: 'que' });
  });

  it('re-adding a tag is a no-op; removing all tags leaves none', async () => {
    const id = await q.send({ param1: 'done', due: later(), tags: ['k'] });
    expect(await q.cmd('tag_message', { msg_id: id, add: ['k'] })).toEqual(['ok', ['k']]);
    expect(await q.cmd('get_history', { msg_id: id })).toEqual(['ok', expect.not.arrayContaining([expect.objectContaining({ event: 'tags' })])]);
    expect(await q.cmd('tag_message', { msg_id: id, remove: 'k' })).toEqual(['ok', []]);
    expect((await q.cmd('get_message', { msg_id: id }))[1].tags).toBeUndefined();
  });

  it('tags a running message; the tag survives the run and is in done', async () => {
    const pidFile = path.join(t.root, 'tag-run.pid');
    const id = await q.send({ param1: 'forever', param2: pidFile });
    const pid = await pidInFile(pidFile);
    expect(await q.cmd('tag_message', { msg_id: id, add: 'while-running' })).toEqual(['ok', ['while-running']]);
    process.kill(-pid, 'SIGKILL');
    const done = await q.waitState(id, ['err']);
    expect(done.tags).toEqual(['while-running']);
    expect((await q.cmd('tagged', { tag: 'while-running' }))[1].messages).toEqual([expect.objectContaining({ msg_id: id, state: 'err' })]);
  });

  it('tags a done message in its hash dir', async () => {
    const id = await q.send({ param1: 'done' });
    await q.waitState(id, ['done']);
    expect(await q.cmd('tag_message', { msg_id: id, add: 'afterwards' })).toEqual(['ok', ['afterwards']]);
    expect((await q.cmd('get_message', { msg_id: id }))[1].tags).toEqual(['afterwards']);
  });

  it('refuses an unknown message, a bad tag and an empty change, changing nothing', async () => {
    const id = await q.send({ param1: 'done', due: later(), tags: ['keep'] });
    expect(await q.cmd('tag_message', { msg_id: '20261121.1643.46.613.1', add: 'x' })).toEqual(['fail', 'msg not found']);
    expect((await q.cmd('tag_message', { msg_id: id, add: 'bad tag' }))[1]).toMatch(/^add\[0\]: expected a tag/);
    expect((await q.cmd('tag_message', { msg_id: id }))[0]).toBe('fail');
    const full = Array.from({ length: 32 }, (_, i) => `f${i}`);
    expect(await q.cmd('tag_message', { msg_id: id, add: full })).toEqual(['fail', 'tags: expected at most 32 tags, received 33']);
    expect((await q.cmd('get_message', { msg_id: id }))[1].tags).toEqual(['keep']);
  });
});

describe('lookup', () => {
  it('pages newest tagging first, filters by state, counts per tag', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await q.send({ param1: 'done', due: later(), tags: ['page'] }));
    const doneId = await q.send({ param1: 'done', tags: ['page'] });
    await q.waitState(doneId, ['done']);
    const all = (await q.cmd('tagged', { tag: 'page', limit: 3 }))[1];
    expect(all.total).toBe(6);
    expect(all.messages.map((m: { msg_id: string }) => m.msg_id)).toEqual([doneId, ids[4], ids[3]]);
    const next = (await q.cmd('tagged', { tag: 'page', offset: 3, limit: 3 }))[1];
    expect(next.messages.map((m: { msg_id: string }) => m.msg_id)).toEqual([ids[2], ids[1], ids[0]]);
    // An empty offset (a form's or a query string's empty field) is no offset: the first page.
    expect((await q.cmd('tagged', { tag: 'page', offset: '', limit: 3 }))[1]).toEqual(all);
    const queued = (await q.cmd('tagged', { tag: 'page', state: 'que' }))[1];
    expect(queued.total).toBe(5);
    expect((await q.cmd('tagged', { tag: 'page', state: 'done' }))[1]).toMatchObject({
      total: 1,
      messages: [{ msg_id: doneId, state: 'done', status: 'done - done sleeping' }],
    });
    expect((await q.cmd('tags'))[1].page).toBe(6);
  });

  it('a deleted message leaves the index; one removed behind the queue’s back is dropped at lookup and reported gone', async () => {
    const a = await q.send({ param1: 'done', due: later(), tags: ['gone'] });
    const b = await q.send({ param1: 'done', tags: ['gone'] });
    await q.waitState(b, ['done']);
    expect(await q.cmd('delete_message', { msg_id: a })).toEqual(['ok', 'msg deleted']);
    expect((await q.cmd('tagged', { tag: 'gone' }))[1].messages.map((m: { msg_id: string }) => m.msg_id)).toEqual([b]);
    await waitFor(async () => (await journalLines()).some((l) => l.id === a && l.gone), 'the gone line of a deleted message');
    // What the cleaner script does: remove a finished message's directory without asking the queue.
    await fs.rm(path.join(t.root, (await q.cmd('get_message', { msg_id: b }))[1].path), { recursive: true });
    expect((await q.cmd('tagged', { tag: 'gone' }))[1]).toEqual({ total: 0, messages: [], gone: [b] });
    expect((await q.cmd('tags'))[1].gone).toBeUndefined();
  });

  it('an acknowledged err message keeps its tags: listed, re-taggable, and found again by a rebuild', async () => {
    const id = await q.send({ param1: 'err', tags: ['acked'] });
    await q.waitState(id, ['err']);
    await q.cmd('ack_errs');
    expect((await q.cmd('tagged', { tag: 'acked' }))[1]).toMatchObject({ total: 1, messages: [{ msg_id: id, state: 'err' }] });
    expect(await q.cmd('tag_message', { msg_id: id, add: 'later' })).toEqual(['ok', ['acked', 'later']]);
    expect(await q.cmd('reindex_tags')).toEqual(['ok', expect.any(Number)]);
    expect((await q.cmd('tagged', { tag: 'later' }))[1].messages).toEqual([expect.objectContaining({ msg_id: id, state: 'err' })]);
  });

  it('refuses a bad tag, state, offset or limit', async () => {
    expect(await q.cmd('tagged', {})).toEqual(['fail', expect.stringContaining('tag')]);
    expect((await q.cmd('tagged', { tag: 'a/b' }))[1]).toMatch(/^tag: expected a tag/);
    expect(await q.cmd('tagged', { tag: 'a', state: 'nowhere' })).toEqual([
      'fail',
      'state: expected one of prep, que, run, done, relayed, err, received "nowhere"',
    ]);
    expect(await q.cmd('tagged', { tag: 'a', offset: -1 })).toEqual(['fail', 'offset: expected a whole number from 0 to 10000000, received -1']);
    expect(await q.cmd('tagged', { tag: 'a', limit: 1001 })).toEqual(['fail', 'limit: expected a whole number from 1 to 1000, received 1001']);
  });
});

describe('cancel_tagged', () => {
  it('cancels every waiting and running message with the tag, and nothing else', async () => {
    const pidFile = path.join(t.root, 'cancel-tagged.pid');
    const waiting = [await q.send({ param1: 'done', due: later(), tags: ['batch'] }), await q.send({ param1: 'done', due: later(), tags: ['batch', 'x'] })];
    const running = await q.send({ param1: 'forever', param2: pidFile, tags: ['batch'] });
    await pidInFile(pidFile);
    const other = await q.send({ param1: 'done', due: later(), tags: ['other'] });
    expect(await q.cmd('cancel_tagged', { tag: 'batch', reason: 'bulk' })).toEqual(['ok', 3]);
    for (const id of [...waiting, running]) expect((await q.waitState(id, ['err'])).outcome).toBe('cancelled');
    expect(await q.state(other)).toBe('que');
    expect(await q.cmd('cancel_tagged', { tag: 'batch' })).toEqual(['ok', 0]);
  });
});

describe('the index across restarts', () => {
  it('is replayed at start, rebuilt from every msg when its journal is missing, and by reindex_tags', async () => {
    const id = await q.send({ param1: 'done', due: later(), tags: ['durable'] });
    await q.stop();
    q = await QueueProc.start(t.root, 'tq');
    expect((await q.cmd('tagged', { tag: 'durable' }))[1].messages.map((m: { msg_id: string }) => m.msg_id)).toEqual([id]);
    await q.stop();
    await fs.rm(journal());
    q = await QueueProc.start(t.root, 'tq');
    expect((await q.cmd('tagged', { tag: 'durable' }))[1].messages.map((m: { msg_id: string }) => m.msg_id)).toEqual([id]);
    expect((await q.cmd('tags'))[1]).toMatchObject({ durable: 1, page: 6, afterwards: 1 });
    // A journal emptied behind the queue's back: reindex reads every msg again.
    await fs.writeFile(journal(), '');
    const [ok, pairs] = await q.cmd('reindex_tags');
    expect(ok).toBe('ok');
    expect(pairs).toBeGreaterThan(10);
    expect((await q.cmd('tags'))[1]).toMatchObject({ durable: 1 });
  });

  it('a SIGKILL after the journal line of a create leaves no message, and the lookup drops the extra entry', async () => {
    // The journal line of a message that was never written (what a kill between the two leaves).
    await q.stop();
    await fs.appendFile(journal(), `${JSON.stringify({ id: '20261125.1200.00.000.999999999', add: ['durable'], at: Date.now() })}\n{"id":"torn`);
    q = await QueueProc.start(t.root, 'tq');
    const page = (await q.cmd('tagged', { tag: 'durable' }))[1];
    expect(page.messages).toHaveLength(1);
    expect(page.gone).toEqual(['20261125.1200.00.000.999999999']);
    expect((await q.cmd('tags'))[1].durable).toBe(1);
  });
});
