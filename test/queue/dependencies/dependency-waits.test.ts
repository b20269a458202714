// DependencyWaits in this process over a temp spool: the create check's refusals, admit after a restart, registrations and their retries, each policy's resolve, undepend, and the waits a message reports.
import fs from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RqError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log.js';
import type { Message } from '../../../src/message/message.js';
import { readResolved } from '../../../src/spool/dependency-files.js';
import type { DependencyState } from '../../../src/queue/dependencies/dependency-outbox.js';
import { DependencyWaits, type DependencyWaitsDeps } from '../../../src/queue/dependencies/dependency-waits.js';
import { historyFile } from '../../helpers/history.js';
import { type TempSpool, tempSpool } from '../../helpers/temp-spool.js';

const HOST_URL = 'http://127.0.0.1:3333/';
const ID = (n: number) => `20261121.1643.46.613.${n}`;
/** A refusal whose text says `text` (and whose code is `code`). */
const saying = (text: string, code?: string) => ({ ...(code ? { code } : {}), message: expect.stringContaining(text) });

let t: TempSpool;
let waits: DependencyWaits;
/** The index the waits park in and let go through (release, or enqueue after unpark). */
let index: { park: ReturnType<typeof vi.fn>; unpark: ReturnType<typeof vi.fn>; enqueue: ReturnType<typeof vi.fn>; release: ReturnType<typeof vi.fn> };
/** Messages put back in the que's order. */
let requeued: Message[];
let pumps: number, failed: [string, string][], registered: [string, string][];
let register: (ref: string, dependent: string) => Promise<DependencyState>;
let exists: (queue: string, id: string) => Promise<boolean | string>;
let queues: Set<string>;

beforeEach(async () => {
  t = await tempSpool('test');
  requeued = [];
  index = { park: vi.fn(), unpark: vi.fn(), enqueue: vi.fn((m: Message) => requeued.push(m)), release: vi.fn((m: Message) => requeued.push(m)) };
  pumps = 0;
  failed = [];
  registered = [];
  queues = new Set(['test', 'other']);
  register = () => Promise.resolve({ state: 'que' });
  exists = () => Promise.resolve(true);
  waits = new DependencyWaits({
    spool: t.spool,
    // Both names of the parking dependency, the index's and the transitions module's.
    index,
    moves: index,
    log: silentLogger(),
    hostUrl: HOST_URL,
    queueExists: (q: string) => queues.has(q),
    exists: (ref: string) => exists(ref.slice(0, ref.indexOf('/')), ref.slice(ref.indexOf('/') + 1)),
    register: (ref: string, dependent: string) => {
      registered.push([ref, dependent]);
      return register(ref, dependent);
    },
    fail: async (msg: Message, status: string) => void failed.push([msg.msg_id, status]),
    pump: () => void pumps++,
  } as unknown as DependencyWaitsDeps);
});
afterEach(async () => {
  waits.close();
  vi.useRealTimers();
  await t.cleanup();
});

/** A que message on disk waiting on `depends`. */
async function queued(n: number, depends: string[], fields: Record<string, unknown> = {}): Promise<Message> {
  const msg = { msg_id: ID(n), depends, ...fields } as unknown as Message;
  await fs.mkdir(t.spool.msgDir('que', ID(n)), { recursive: true });
  await t.spool.writeMessage('que', ID(n), msg);
  return msg;
}

describe('check (at create)', () => {
  it('reads refs as this host and this queue', () => expect(waits.refContext).toEqual({ hostUrl: HOST_URL, queue: 'test', fleet: false }));
  it('reads refs in this queue and of this host, and asks each one', async () => {
    const asked: string[] = [];
    exists = async (q, id) => {
      asked.push(`${q}/${id}`);
      return true;
    };
    expect(await waits.check([ID(1), `other/${ID(2)}`, `${HOST_URL}q/other/${ID(3)}`])).toEqual([`test/${ID(1)}`, `other/${ID(2)}`, `other/${ID(3)}`]);
    expect(asked.sort()).toEqual([`other/${ID(2)}`, `other/${ID(3)}`, `test/${ID(1)}`]);
  });

  it('refuses a queue that does not exist, one that did not answer and a message that is not there, by its place', async () => {
    await expect(waits.check([ID(1), `gone/${ID(2)}`])).rejects.toMatchObject(saying('depends[1]: queue gone does not exist', 'RQ_ERR_BAD_DEPENDENCY'));
    exists = async (q) => (q === 'other' ? 'timeout' : true);
    await expect(waits.check([ID(1), `other/${ID(2)}`])).rejects.toMatchObject(saying('depends[1]: queue other could not be asked (timeout)'));
    exists = async (_q, id) => id !== ID(2);
    await expect(waits.check([`other/${ID(2)}`])).rejects.toMatchObject({ message: expect.stringContaining(`depends[0]: no message other/${ID(2)}`) });
  });
});

describe('admit', () => {
  it('a message without depends is not held', () => {
    expect(waits.admit({ msg_id: ID(1) } as Message)).toBe(false);
    const empty = { msg_id: ID(1), depends: [] } as unknown as Message;
    expect(waits.admit(empty)).toBe(false);
    expect('depends_done' in empty).toBe(false);
    expect(waits.admit({ msg_id: ID(1), depends: 'x' } as unknown as Message)).toBe(false);
    expect(index.park).not.toHaveBeenCalled();
  });

  it('holds it off the que on what is not resolved; a success counts as resolved, a failure only under run', async () => {
    const deps = [`other/${ID(2)}`, `other/${ID(3)}`, `other/${ID(4)}`];
    const at = 'x';
    const resolved = [
      { ref: deps[0], state: 'done', at },
      { ref: deps[1], state: 'err', outcome: 'failed', at },
    ];
    const fail = { msg_id: ID(1), depends: deps } as unknown as Message;
    expect(waits.admit(fail, resolved)).toBe(true);
    expect(fail.depends_done).toEqual({ [deps[0]]: 'done', [deps[1]]: 'err:failed' });
    expect(waits.waitingOf(ID(1))).toEqual({ reason: 'dependencies', waiting_on: [deps[1], deps[2]] });
    expect(index.park).toHaveBeenCalledWith(fail, 'depends');
    const run = { msg_id: ID(5), depends: deps, depends_fail: 'run' } as unknown as Message;
    expect(waits.admit(run, [...resolved, { ref: deps[2], state: 'deleted', at }])).toBe(false);
    const relayed = { msg_id: ID(6), depends: [deps[0]] } as unknown as Message;
    expect(waits.admit(relayed, [{ ref: deps[0], state: 'relayed', at }])).toBe(false);
    expect(waits.waitingList()).toEqual([{ msg_id: ID(1), reason: 'dependencies', waiting_on: [deps[1], deps[2]] }]);
  });

  it('recover reads the resolved file of the que message', async () => {
    const msg = await queued(1, [`other/${ID(2)}`, `other/${ID(3)}`]);
    await fs.writeFile(`${t.spool.msgDir('que', ID(1))}/resolved`, `${JSON.stringify({ ref: `other/${ID(2)}`, state: 'done', at: 'x' })}\n`);
    const fresh = { msg_id: ID(7), depends: [`other/${ID(8)}`] } as unknown as Message;
    expect([waits.admit(fresh), fresh.depends_done]).toEqual([true, {}]);
    expect(await waits.recover(msg)).toBe(true);
    expect(waits.waitingOf(ID(1))?.waiting_on).toEqual([`other/${ID(3)}`]);
  });
});

describe('register', () => {
  it('sends add_dependent for each awaited ref as <queue>/<id>; a finished answer resolves at once', async () => {
    const msg = await queued(1, [`other/${ID(2)}`, `other/${ID(3)}`]);
    waits.admit(msg);
    register = async (ref) => (ref.endsWith(ID(2)) ? { state: 'done' } : { state: 'run' });
    await waits.register(ID(1));
    expect(registered.sort()).toEqual([
      [`other/${ID(2)}`, `test/${ID(1)}`],
      [`other/${ID(3)}`, `test/${ID(1)}`],
    ]);
    expect(waits.waitingOf(ID(1))?.waiting_on).toEqual([`other/${ID(3)}`]);
    await waits.register(ID(9));
    expect(registered.length).toBe(2);
  });

  it('a dependency gone (no such message) resolves as deleted', async () => {
    const msg = await queued(1, [`other/${ID(2)}`], { depends_fail: 'run' });
    waits.admit(msg);
    register = () => Promise.reject(RqError.of('RQ_ERR_NO_SUCH_MSG'));
    await waits.register(ID(1));
    expect(waits.waitingOf(ID(1))).toBeUndefined();
    expect((await readResolved(t.spool.msgDir('que', ID(1))))[0]).toMatchObject({ ref: `other/${ID(2)}`, state: 'deleted' });
  });

  it('an unanswered registration is sent again after 1 s, then 2 s, and not after the message stops waiting', async () => {
    const msg = await queued(1, [`other/${ID(2)}`]);
    waits.admit(msg);
    vi.useFakeTimers();
    register = () => Promise.reject(new Error('timeout'));
    await waits.register(ID(1));
    expect(registered.length).toBe(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(registered.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(registered.length).toBe(2);
    await vi.advanceTimersByTimeAsync(2000);
    expect(registered.length).toBe(3);
    waits.forget(ID(1));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(registered.length).toBe(3);
  });

  it('nothing is sent again once closed', async () => {
    const msg = await queued(1, [`other/${ID(2)}`]);
    waits.admit(msg);
    vi.useFakeTimers();
    register = () => Promise.reject(new Error('timeout'));
    await waits.register(ID(1));
    waits.close();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(registered.length).toBe(1);
  });
});

describe('resolve', () => {
  it('ignores a message not waiting, a ref not awaited and a state not finished', async () => {
    const msg = await queued(1, [`other/${ID(2)}`]);
    waits.admit(msg);
    expect(await waits.resolve(ID(9), `other/${ID(2)}`, 'done')).toBe('ignored');
    expect(await waits.resolve(ID(1), `other/${ID(3)}`, 'done')).toBe('ignored');
    expect(await waits.resolve(ID(1), `other/${ID(2)}`, 'run')).toBe('ignored');
    expect(await readResolved(t.spool.msgDir('que', ID(1)))).toEqual([]);
  });

  it('a success is recorded durably and in depends_done; the last one lets the message go', async () => {
    const msg = await queued(1, [`other/${ID(2)}`, `other/${ID(3)}`]);
    waits.admit(msg);
    expect(await waits.resolve(ID(1), `other/${ID(2)}`, 'done')).toBe('resolved');
    expect(requeued).toEqual([]);
    expect(await waits.resolve(ID(1), `other/${ID(3)}`, 'relayed')).toBe('resolved');
    expect(msg.depends_done).toEqual({ [`other/${ID(2)}`]: 'done', [`other/${ID(3)}`]: 'relayed' });
    const lines = await readResolved(t.spool.msgDir('que', ID(1)));
    expect(lines.map((l) => [l.ref, l.state, 'outcome' in l])).toEqual([
      [`other/${ID(2)}`, 'done', false],
      [`other/${ID(3)}`, 'relayed', false],
    ]);
    expect(requeued).toEqual([msg]);
    expect(pumps).toBe(1);
    expect(waits.waitingOf(ID(1))).toBeUndefined();
    const history = await historyFile(t.spool.msgDir('que', ID(1)));
    expect(history.filter((h) => h.event === 'depends_resolved').map((h) => [h.ref, h.state, 'outcome' in h])).toEqual([
      [`other/${ID(2)}`, 'done', false],
      [`other/${ID(3)}`, 'relayed', false],
    ]);
  });

  it('under fail, an err dependency ends the message with its outcome, and a deleted one says it no longer exists', async () => {
    const a = await queued(1, [`other/${ID(2)}`, `other/${ID(3)}`]);
    waits.admit(a);
    expect(await waits.resolve(ID(1), `other/${ID(2)}`, 'err', 'timeout')).toBe('resolved');
    expect(failed).toEqual([[ID(1), `DEPENDENCY FAILED - other/${ID(2)} is err (timeout)`]]);
    expect(a.depends_done).toEqual({ [`other/${ID(2)}`]: 'err:timeout' });
    expect(index.unpark).toHaveBeenCalledWith(ID(1));
    expect(waits.waitingOf(ID(1))).toBeUndefined();
    expect(requeued).toEqual([]);
    const lines = await readResolved(t.spool.msgDir('que', ID(1)));
    expect(lines[0]).toMatchObject({ ref: `other/${ID(2)}`, state: 'err', outcome: 'timeout' });
    const history = await historyFile(t.spool.msgDir('que', ID(1)));
    expect(history.find((h) => h.event === 'depends_resolved')).toMatchObject({ outcome: 'timeout' });
    const b = await queued(4, [`other/${ID(5)}`]);
    waits.admit(b);
    await waits.resolve(ID(4), `other/${ID(5)}`, 'deleted');
    const c = await queued(6, [`other/${ID(7)}`]);
    waits.admit(c);
    await waits.resolve(ID(6), `other/${ID(7)}`, 'err');
    expect(failed.slice(1)).toEqual([
      [ID(4), `DEPENDENCY FAILED - other/${ID(5)} no longer exists`],
      [ID(6), `DEPENDENCY FAILED - other/${ID(7)} is err (failed)`],
    ]);
  });

  it('under wait, a failed dependency keeps the message waiting on it; under run, it counts as resolved', async () => {
    const w = await queued(1, [`other/${ID(2)}`], { depends_fail: 'wait' });
    waits.admit(w);
    expect(await waits.resolve(ID(1), `other/${ID(2)}`, 'err', 'failed')).toBe('resolved');
    expect(waits.waitingOf(ID(1))?.waiting_on).toEqual([`other/${ID(2)}`]);
    expect(w.depends_done).toEqual({ [`other/${ID(2)}`]: 'err:failed' });
    const r = await queued(3, [`other/${ID(4)}`], { depends_fail: 'run' });
    waits.admit(r);
    await waits.resolve(ID(3), `other/${ID(4)}`, 'deleted');
    expect(waits.waitingOf(ID(3))).toBeUndefined();
    expect(requeued).toEqual([r]);
    expect(failed).toEqual([]);
  });

  it('a message taken out of its wait while the line is written is not let go', async () => {
    const msg = await queued(1, [`other/${ID(2)}`]);
    waits.admit(msg);
    const p = waits.resolve(ID(1), `other/${ID(2)}`, 'done');
    waits.forget(ID(1));
    expect(await p).toBe('resolved');
    expect(requeued).toEqual([]);
    expect(msg.depends_done).toEqual({});
  });
});

describe('undepend', () => {
  it('refuses a message that does not wait', async () => {
    await expect(waits.undepend(ID(1), null, 'web')).rejects.toMatchObject({ code: 'RQ_ERR_NOT_WAITING_DEPS' });
  });

  it('drops the refs named, durably, and lets the message go when none is left', async () => {
    const deps = [`other/${ID(2)}`, `other/${ID(3)}`];
    const msg = await queued(1, deps);
    waits.admit(msg);
    expect(await waits.undepend(ID(1), [deps[0]], 'web')).toEqual([deps[1]]);
    expect((await t.spool.readMessage('que', ID(1))).depends).toEqual([deps[1]]);
    expect(msg.depends).toEqual([deps[1]]);
    expect(requeued).toEqual([]);
    expect(await waits.undepend(ID(1), null, 'cli')).toEqual([]);
    const disk = await t.spool.readMessage('que', ID(1));
    expect('depends' in disk).toBe(false);
    expect(msg.depends).toBeUndefined();
    expect(requeued).toEqual([msg]);
    expect(pumps).toBe(1);
    const history = await historyFile(t.spool.msgDir('que', ID(1)));
    expect(history.filter((h) => h.event === 'undepend').map((h) => [h.actor, h.refs])).toEqual([
      ['web', [deps[0]]],
      ['cli', [deps[1]]],
    ]);
  });

  it('a message taken out of its wait during the write reports nothing left', async () => {
    const msg = await queued(1, [`other/${ID(2)}`, `other/${ID(3)}`]);
    waits.admit(msg);
    const p = waits.undepend(ID(1), [`other/${ID(2)}`], 'web');
    waits.forget(ID(1));
    expect(await p).toEqual([]);
    expect(msg.depends).toEqual([`other/${ID(2)}`, `other/${ID(3)}`]);
  });
});
