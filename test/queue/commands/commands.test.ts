// Every queue socket command with its reply shapes and texts, against a real queue process.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';
import { request } from '../../../src/ipc/socket-client.js';
import { encodeFrame } from '../../../src/ipc/framing.js';

const ID_RE = /^\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/;
let t: TestRoot;
let q: QueueProc;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'cmds');
  q = await QueueProc.start(t.root, 'cmds');
});
afterAll(async () => {
  await q?.stop();
  await t?.cleanup();
});

describe('always-answered commands', () => {
  it('ping, uptime, config, status', async () => {
    expect(await q.cmd('ping')).toEqual(['pong']);
    const up = await q.cmd('uptime');
    expect(Number.isInteger(up[0])).toBe(true);
    const cfg = await q.cmd('config');
    expect(cfg[0]).toBe('ok');
    expect(Object.keys(cfg[1])).toEqual(['name', 'script', 'num_workers', 'exec_prefix', 'env_vars', 'coalesce_params', 'blocking_params']);
    expect(await q.cmd('status')).toEqual(['UP']);
  });

  it('unknown commands and bad JSON get error replies and the queue stays up', async () => {
    expect((await q.cmd('frobnicate'))[0]).toBe('ERROR');
    const raw = await request(q.paths.sock, 'rq1', 'create_message {not json');
    expect(JSON.parse(raw)).toEqual(['fail', expect.stringContaining('invalid JSON argument')]);
    // An argument that is JSON but no object is refused as such, not read as {} and refused for a missing dest.
    for (const arg of ['[1,2]', '"x"', '7', 'null']) {
      expect(JSON.parse(await request(q.paths.sock, 'rq1', `create_message ${arg}`)), arg).toEqual([
        'fail',
        `argument: expected a JSON object such as {"msg_id": "…"}, or none, received ${arg === '"x"' ? '"x"' : arg}`,
      ]);
    }
    expect(await q.cmd('ping')).toEqual(['pong']);
  });

  it('answers several requests on one connection', async () => {
    const net = await import('node:net');
    const sock = net.createConnection(q.paths.sock);
    const frames = Buffer.concat([encodeFrame('rq1', 'ping '), encodeFrame('rq1', 'status '), encodeFrame('rq1', 'uptime ')]);
    const got = await new Promise<string>((resolve) => {
      let buf = '';
      sock.on('data', (d) => {
        buf += d.toString();
        if ((buf.match(/rq1 /g) ?? []).length === 3 && buf.endsWith(']')) resolve(buf);
      });
      sock.write(frames);
    });
    sock.destroy();
    expect(got).toContain('["pong"]');
    expect(got).toContain('["UP"]');
  });
});

describe('create, prep, attach, commit', () => {
  it('create_message returns a full id and the message runs to done', async () => {
    const r = await q.cmd('create_message', { dest: 'cmds', param1: 'done', src: 'test', bogus: 'dropped' });
    expect(r[0]).toBe('ok');
    expect(r[1]).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${t.port}/q/cmds/\\d{8}\\.\\d{4}\\.\\d{2}\\.\\d{3}\\.\\d+$`));
    const id = r[1].split('/').pop();
    const m = await q.waitState(id, ['done']);
    expect(m).toMatchObject({
      msg_id: id,
      dest: 'cmds',
      orig_msg_id: r[1],
      count: 0,
      max_count: 15,
      src: 'test',
      param1: 'done',
      state: 'done',
      status: 'done - done sleeping',
    });
    expect(m.bogus).toBeUndefined();
    expect(m.path).toMatch(new RegExp(`^queues/cmds/done/\\d{8}/\\d{2}/\\d{2}/${id.replace(/\./g, '\\.')}$`));
    expect(typeof m.due).toBe('number');
  });

  it('refuses a create without dest with the classic text, leaving nothing behind', async () => {
    expect(await q.cmd('create_message', { param1: 'x' })).toEqual(['fail', 'input missing required "dest" parameter']);
    expect(await q.cmd('create_message', { dest: 'cmds', count: 'many' })).toEqual(['fail', 'count: expected a whole number >= 0, received "many"']);
    const left = (await fs.readdir(q.paths.state.prep)).filter((n) => n.startsWith('_'));
    expect(left).toEqual([]);
  });

  it('prep, attach, delete attachment, commit', async () => {
    const r = await q.cmd('prep_message', { dest: 'cmds', param1: 'done' });
    const id = r[1].split('/').pop();
    expect(id).toMatch(ID_RE);
    expect(await q.state(id)).toBe('prep');
    expect(await q.cmd('messages', { state: 'prep' })).toContain(id);
    const file = path.join(t.root, 'hello.txt');
    await fs.writeFile(file, 'hello world\n');
    expect(await q.cmd('attach_message', { msg_id: id, pathname: file })).toEqual(['ok', '6f5902ac237024bdd0c176cb93063dc4-Attached successfully']);
    expect(await q.cmd('attach_message', { msg_id: id, pathname: file, name: 'second.txt' })).toEqual([
      'ok',
      '6f5902ac237024bdd0c176cb93063dc4-Attached successfully',
    ]);
    expect(await q.cmd('attach_message', { msg_id: id, pathname: 'relative/x' })).toEqual([
      'fail',
      'Invalid pathname, must be normalized relative/x (ie. must start with /',
    ]);
    expect(await q.cmd('attach_message', { msg_id: id, pathname: file, name: '.hidden' })).toEqual([
      'fail',
      'Attachment name as a dot-file not allowed: .hidden',
    ]);
    expect(await q.cmd('attach_message', { pathname: file })).toEqual(['fail', "lacking 'msg_id' field"]);
    expect(await q.cmd('delete_attach_message', { msg_id: id, attachment_name: 'second.txt' })).toEqual(['ok', 'Attachment deleted successfully']);
    expect(await q.cmd('delete_attach_message', { msg_id: id, attachment_name: 'second.txt' })).toEqual([false, 'No attachment with that named for msg']);
    const view = await q.cmd('get_message', { msg_id: id });
    expect(view[1]._attachments).toEqual({
      'hello.txt': { md5: '6f5902ac237024bdd0c176cb93063dc4', size: 12, path: path.join(q.paths.state.prep, id, 'attach', 'hello.txt') },
    });
    expect(await q.cmd('commit_message', { msg_id: id })).toEqual(['ok', 'msg commited']);
    expect(await q.cmd('commit_message', { msg_id: id })).toEqual(['fail', 'cannot find message']);
    await q.waitState(id, ['done']);
    expect(await q.cmd('attach_message', { msg_id: id, pathname: file })).toEqual(['fail', 'cannot find message']);
    expect(await q.cmd('delete_attach_message', { msg_id: id, attachment_name: 'hello.txt' })).toEqual(['fail', 'msg not in prep']);
  });

  it('msg_id problems: missing, malformed, unknown', async () => {
    expect(await q.cmd('get_message', {})).toEqual(['fail', "lacking 'msg_id' field"]);
    expect((await q.cmd('get_message', { msg_id: '../../etc' }))[1]).toMatch(/^msg_id: expected a message id/);
    expect(await q.cmd('get_message', { msg_id: '20200101.0000.00.000.1' })).toEqual(['fail', 'msg not found']);
    expect(await q.cmd('get_message_state', { msg_id: '20200101.0000.00.000.1' })).toEqual(['fail', 'msg not found']);
    // commit_message checks its msg_id itself (only prep messages): a missing one is named, not "not found".
    for (const args of [{}, { msg_id: '' }, { msg_id: null }]) expect(await q.cmd('commit_message', args)).toEqual(['fail', "lacking 'msg_id' field"]);
    expect(await q.cmd('commit_message', { msg_id: '20200101.0000.00.000.1' })).toEqual(['fail', 'cannot find message']);
  });

  it("dependency_resolved (another queue's word that a dependency ended) refuses a state that is no text, naming it", async () => {
    const args = { msg_id: '20200101.0000.00.000.1', dependency: 'other/20200101.0000.00.000.2' };
    expect(await q.cmd('dependency_resolved', { ...args, state: 5 })).toEqual(['fail', 'state: expected a state, received 5']);
  });
});

describe('operator operations', () => {
  it('get_message_status, clone, delete (done too), ack_errs, errack', async () => {
    const done = await q.send({ param1: 'done' });
    await q.waitState(done, ['done']);
    const st = await q.cmd('get_message_status', { msg_id: done });
    expect(st).toEqual(['ok', { path: expect.stringContaining(`queues/cmds/done/`), status: 'done - done sleeping', state: 'done' }]);

    const cloned = await q.cmd('clone_message', { msg_id: done });
    expect(cloned[0]).toBe('ok');
    const cid = cloned[1].split('/').pop();
    const cm = await q.waitState(cid, ['done']);
    expect(cm.cloned_from).toBe(done);
    expect(cm.count).toBe(0);

    expect(await q.cmd('delete_message', { msg_id: done })).toEqual(['ok', 'msg deleted']);
    expect(await q.cmd('get_message_state', { msg_id: done })).toEqual(['fail', 'msg not found']);

    const err = await q.send({ param1: 'err' });
    const em = await q.waitState(err, ['err']);
    expect(em.status).toBe('err - by design');
    const before = await q.cmd('num_messages');
    expect(before.err).toBeGreaterThanOrEqual(1);
    expect(await q.cmd('messages', { state: 'err' })).toContain(err);
    const acked = await q.cmd('ack_errs');
    expect(acked[0]).toBe('ok');
    expect(acked[1]).toBeGreaterThanOrEqual(1);
    expect(await q.cmd('messages', { state: 'errack' })).toContain(`.${err}`);
    expect((await q.cmd('num_messages')).err).toBe(0);
    expect(await q.cmd('get_message_state', { msg_id: `.${err}` })).toEqual(['ok', 'err']);
    expect(await q.cmd('clone_message', { msg_id: `.${err}` })).toEqual(['ok', expect.any(String)]);
    expect(await q.cmd('delete_message', { msg_id: `.${err}` })).toEqual(['ok', 'msg deleted']);
  });

  it('run_message, destroy_message and the state errors', async () => {
    const slow = await q.send({ param1: 'forever' });
    await q.waitState(slow, ['run']);
    const later = await q.send({ param1: 'done', due: Math.floor(Date.now() / 1000) + 3600 });
    expect(await q.cmd('run_message', { msg_id: slow })).toEqual(['fail', 'msg already running']);
    const messagesQue = await q.cmd('messages', { state: 'que' });
    expect(messagesQue).toEqual([[later, expect.any(Number)]]);
    expect(await q.cmd('clone_message', { msg_id: later })).toEqual(['fail', 'cannot clone message in que state']);
    expect(await q.cmd('run_message', { msg_id: later })).toEqual(['ok', 'msg sent to front of run queue']);
    // The status text is the script's own fd 3 line, which may come after the move into run/.
    const running = async () => JSON.stringify((await q.cmd('messages', { state: 'run' }))[0]);
    await waitFor(async () => (await running()) === JSON.stringify([slow, 'run - forever']), "the running message to show its script's status");
    expect(await q.cmd('destroy_message', { msg_id: slow })).toEqual(['ok', 'msg destroyed']);
    const m = await q.waitState(slow, ['err']);
    expect(m.status).toMatch(/^err - PROCESS EXITED IMPROPERLY - MOVING TO ERR - Completion was {2}but exit status was pid \d+ SIGTERM \(signal 15\)$/);
    await q.waitState(later, ['done']);
    expect(await q.cmd('destroy_message', { msg_id: later })).toEqual(['fail', 'msg not found']);
    expect(await q.cmd('run_message', { msg_id: later })).toEqual(['fail', 'msg not in runnable state']);
  });

  it('messages: listings and bad states', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await q.send({ param1: 'done', param2: `needle-${i}` }));
    for (const id of ids) await q.waitState(id, ['done']);
    const done = await q.cmd('messages', { state: 'done', limit: 2 });
    expect(done).toHaveLength(2);
    expect(await q.cmd('messages', { state: 'done', limit: 50, filter: 'needle-1' })).toEqual([ids[1]]);
    expect(await q.cmd('messages', { state: 'relayed' })).toEqual([]);
    expect(await q.cmd('messages', { state: 'bogus' })).toEqual(['fail', "invalid or missing 'state' field (bogus)"]);
    // A missing state shows as nothing between the brackets.
    expect(await q.cmd('messages', {})).toEqual(['fail', "invalid or missing 'state' field ()"]);
    const n = await q.cmd('num_messages');
    expect(Object.keys(n)).toEqual(['prep', 'que', 'run', 'done', 'relayed', 'err']);
  });

  it('single_que returns a queued message only when its params match', async () => {
    const r1 = await q.cmd('single_que', { dest: 'cmds', param1: 'done', param2: 'sq', due: Math.floor(Date.now() / 1000) + 3600 });
    const r2 = await q.cmd('single_que', { dest: 'cmds', param1: 'done', param2: 'sq' });
    const r3 = await q.cmd('single_que', { dest: 'cmds', param1: 'done', param2: 'other', due: Math.floor(Date.now() / 1000) + 3600 });
    expect(r2).toEqual(r1);
    expect(r3[1]).not.toEqual(r1[1]);
    for (const r of [r1, r3]) expect(await q.cmd('delete_message', { msg_id: r[1].split('/').pop() })).toEqual(['ok', 'msg deleted']);
  });
});

/**
 * Whether the message has reached done/ on disk. Waiting through the socket would not do where
 * the watch is under test: every command but ping, uptime, config and shutdown re-reads the
 * admin files itself and would wake the dispatcher on its own.
 */
async function doneOnDisk(proc: QueueProc, id: string): Promise<boolean> {
  const entries = await fs.readdir(proc.paths.state.done, { recursive: true });
  return entries.some((e) => path.basename(String(e)) === id);
}

describe('admin state', () => {
  it('DOWN refuses all but the always-answered commands; PAUSE accepts and holds; the watch alone resumes', async () => {
    const down = path.join(t.root, 'config', 'cmds.down');
    const pause = path.join(t.root, 'config', 'cmds.pause');
    await fs.writeFile(down, '');
    expect(await q.cmd('status')).toEqual(['DOWN']);
    expect(await q.cmd('create_message', { dest: 'cmds', param1: 'done' })).toEqual(['fail', 'status: DOWN']);
    expect(await q.cmd('num_messages')).toEqual(['fail', 'status: DOWN']);
    expect(await q.cmd('ping')).toEqual(['pong']);
    await fs.rm(down);
    await fs.writeFile(pause, '');
    expect(await q.cmd('status')).toEqual(['PAUSE']);
    // A create runs a dispatch pass before it answers, so an UP queue would have started the first
    // message by the time the second (a marker) is acknowledged; a paused one holds both.
    const id = await q.send({ param1: 'done' });
    const marker = await q.send({ param1: 'done' });
    expect(await q.state(id)).toBe('que');
    expect(await q.state(marker)).toBe('que');
    await fs.rm(pause);
    await waitFor(async () => (await doneOnDisk(q, id)) && (await doneOnDisk(q, marker)), 'the watch to resume the queue', 5000);
  });
});

describe('admin state: a request alone notices a change', () => {
  // The pause file is a symlink whose target lives outside config/: removing the target leaves
  // config/ untouched, so the watch has no event to report and only a request's re-read can see
  // that the queue is no longer paused. The link exists before the queue starts, so no late
  // watch event from creating it can stand in for the request either.
  const held: QueueProc[] = [];
  afterAll(async () => {
    await Promise.all(held.map((p) => p.stop()));
  });

  it.each([
    ['status', 'heldstatus'],
    ['num_messages', 'heldcount'],
  ])('%s sees a pause file the watch cannot see go and wakes the dispatcher', async (command, name) => {
    const target = path.join(t.root, `${name}.pause-target`);
    await fs.writeFile(target, '');
    await addQueue(t.root, name);
    await fs.symlink(target, path.join(t.root, 'config', `${name}.pause`));
    const proc = await QueueProc.start(t.root, name);
    held.push(proc);
    const id = await proc.send({ dest: name, param1: 'done' });
    expect(await proc.state(id)).toBe('que');
    await fs.rm(target);
    const reply = await proc.cmd(command);
    if (command === 'status') expect(reply).toEqual(['UP']);
    else expect(reply).toHaveProperty('que');
    await waitFor(() => doneOnDisk(proc, id), `${command} to wake the dispatcher`, 5000);
  });
});
