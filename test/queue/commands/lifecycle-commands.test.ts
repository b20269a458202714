// The lifecycle commands' arguments in-process (rq-beyond §B1.8): due and delay, default actors, refusals, what a DOWN queue still answers.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type InProcess, inProcessQueue } from '../in-process.js';

let q: InProcess | null = null;
afterEach(async () => {
  await q?.close();
  q = null;
});

const history = async (p: InProcess, id: string): Promise<Record<string, unknown>[]> => (await p.cmd('get_history', { msg_id: id }))[1];

describe('due and delay', () => {
  it('delay counts from now to the millisecond; numbers may come as text; due 0 is a due', async () => {
    q = await inProcessQueue({}, { paused: true });
    q.clock.ms += 250;
    const { msg_id } = await q.send({ due: Math.floor(q.clock.ms / 1000) + 3600 });
    const reschedule = (arg: Record<string, unknown>) => q!.cmd('reschedule_message', { msg_id, ...arg });
    expect(await reschedule({ delay: 90.5 })).toEqual(['ok', (q.clock.ms + 90_500) / 1000]);
    expect(await reschedule({ delay: ' 30 ' })).toEqual(['ok', (q.clock.ms + 30_000) / 1000]);
    expect(await reschedule({ due: '1795612345' })).toEqual(['ok', 1795612345]);
    expect(await reschedule({ due: 0 })).toEqual(['ok', 0]);
    // An empty or null field is no field: the other one is used.
    expect(await reschedule({ due: '', delay: 5 })).toEqual(['ok', (q.clock.ms + 5000) / 1000]);
    expect(await reschedule({ due: 60, delay: null })).toEqual(['ok', 60]);
    // A delay may end at the last second of year 9999 exactly.
    expect(await reschedule({ delay: (253_402_300_799_000 - q.clock.ms) / 1000 })).toEqual(['ok', 253_402_300_799]);
  });

  it('refuses a due that is not epoch seconds, and a missing one', async () => {
    q = await inProcessQueue({}, { paused: true });
    const { msg_id } = await q.send();
    const reschedule = (arg: Record<string, unknown>) => q!.cmd('reschedule_message', { msg_id, ...arg });
    const bad = (shown: string) => ['fail', `due: expected epoch seconds (a number from 0 to 253402300799, the end of year 9999), received ${shown}`];
    expect(await reschedule({ due: -1 })).toEqual(bad('-1'));
    expect(await reschedule({ due: '  ' })).toEqual(bad('"  "'));
    expect(await reschedule({ due: true })).toEqual(bad('true'));
    expect(await reschedule({ due: 'Infinity' })).toEqual(bad('"Infinity"'));
    expect(await reschedule({ due: 1e300 })).toEqual(bad('1e+300'));
    expect(await reschedule({ delay: 253_402_300_799 })).toEqual([
      'fail',
      'delay: expected seconds >= 0, ending by 253402300799 (the end of year 9999), received 253402300799',
    ]);
    for (const due of [null, '']) expect(await reschedule({ due })).toEqual(['fail', "lacking 'due' field"]);
    expect((await q.cmd('get_message', { msg_id }))[1].due).toBe(Math.floor(q.clock.ms / 1000));
  });
});

describe('actors', () => {
  it('reschedule and set_priority name the actor given, else socket, in the history', async () => {
    q = await inProcessQueue({}, { paused: true });
    const { msg_id } = await q.send();
    await q.cmd('reschedule_message', { msg_id, delay: 10 });
    await q.cmd('set_priority', { msg_id, priority: 2 });
    await q.cmd('set_priority', { msg_id, priority: 1, actor: 'cli:fay' });
    expect((await history(q, msg_id)).slice(-3).map((l) => [l.event, l.actor])).toEqual([
      ['reschedule', 'socket'],
      ['priority', 'socket'],
      ['priority', 'cli:fay'],
    ]);
  });

  it('set_priority without a priority is refused, naming the field', async () => {
    q = await inProcessQueue({}, { paused: true });
    const { msg_id } = await q.send();
    expect(await q.cmd('set_priority', { msg_id })).toEqual(['fail', "lacking 'priority' field"]);
  });
});

describe('a DOWN queue', () => {
  it('still answers get_history, running, waiting and wait_message; a cancel is refused', async () => {
    q = await inProcessQueue({}, { paused: true });
    const { msg_id } = await q.send({ due: Math.floor(q.clock.ms / 1000) + 60 });
    const finished = (await q.send()).msg_id;
    await q.cmd('cancel_message', { msg_id: finished });
    await fs.writeFile(path.join(q.root, 'config', 'q.down'), '');
    expect(await q.cmd('status')).toEqual(['DOWN']);
    expect((await q.cmd('get_history', { msg_id }))[0]).toBe('ok');
    expect(await q.cmd('wait_message', { msg_id: finished })).toEqual(['ok', expect.objectContaining({ state: 'err' })]);
    expect(await q.cmd('running')).toEqual(['ok', []]);
    expect(await q.cmd('waiting')).toEqual(['ok', [{ msg_id, reason: 'delayed', due: Math.floor(q.clock.ms / 1000) + 60 }]]);
    expect(await q.cmd('cancel_message', { msg_id })).toEqual(['fail', 'status: DOWN']);
  });
});

describe('wake_pool', () => {
  it('makes due now the messages for fleet:<queue> that wait out a back-off, not one sent for later, nor another pool', async () => {
    q = await inProcessQueue({}, { paused: true });
    const later = Math.floor(q.clock.ms / 1000) + 3600;
    const backoff = (await q.send({ dest: 'fleet:work', count: 2, due: later })).msg_id;
    const scheduled = (await q.send({ dest: 'fleet:work', due: later })).msg_id;
    const other = (await q.send({ dest: 'fleet:other', count: 1, due: later })).msg_id;
    const due = async (id: string) => (await q!.cmd('get_message', { msg_id: id }))[1].due;
    expect(await due(backoff)).toBe(later);
    expect(await q.cmd('wake_pool', { queue: 'work' })).toEqual(['ok', 1]);
    expect(await due(backoff)).toBe(Math.floor(q.clock.ms / 1000));
    expect((await history(q, backoff)).at(-1)).toMatchObject({ event: 'reschedule', actor: 'fleet' });
    expect(await due(scheduled)).toBe(later);
    expect(await due(other)).toBe(later);
    // Nothing waits any more: a second word changes nothing.
    expect(await q.cmd('wake_pool', { queue: 'work' })).toEqual(['ok', 0]);
    expect(await q.cmd('wake_pool', { queue: 'no such/queue' })).toEqual(['fail', 'queue: expected a queue name, received "no such/queue"']);
  });
});
