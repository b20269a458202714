// The queue's memory: which live state a message is in, folds, and counts that never go negative.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/message/message.js';
import { MessageIndex } from '../../../src/queue/index/message-index.js';
import { ScriptRun } from '../../../src/queue/launch/script-run.js';

const msg = (id: string, due = 0, extra: Partial<Message> = {}) => ({ msg_id: id, dest: 'q', due, ...extra }) as Message;

describe('MessageIndex', () => {
  it('answers where each message is, and what it knows of it', () => {
    const ix = new MessageIndex();
    ix.addPrep('p', null);
    ix.enqueue(msg('a', 5));
    ix.addRun(new ScriptRun(msg('r'), pino({ level: 'silent' }), 0));
    expect(['p', 'a', 'r', 'x'].map((id) => ix.liveState(id))).toEqual(['prep', 'que', 'run', null]);
    expect(ix.liveMessage('a')?.due).toBe(5);
    expect(ix.liveMessage('r')?.msg_id).toBe('r');
    expect(ix.liveMessage('p')).toBeUndefined();
    expect([ix.isQueued('a'), ix.isQueued('p'), ix.isQueued('r')]).toEqual([true, false, false]);
    expect(ix.counts()).toEqual({ prep: 1, que: 1, run: 1, done: 0, relayed: 0, err: 0 });
    expect(ix.takePrep('p')).toBeNull();
    expect(ix.takePrep('p')).toBeUndefined();
  });

  it('a folded message leaves the que but is still found in que; unfolding puts it back in order', () => {
    const ix = new MessageIndex();
    const a = msg('a', 1);
    const b = msg('b', 2);
    ix.enqueue(a);
    ix.enqueue(b);
    ix.fold(a, 'http://h/q/q/parent');
    expect(a.dup).toBe('http://h/q/q/parent');
    expect(ix.nextQueued()?.msg_id).toBe('b');
    expect(ix.liveState('a')).toBe('que');
    expect(ix.isCoalesced('a')).toBe(true);
    expect(ix.counts().que).toBe(1);
    ix.unfold(a);
    expect(a.dup).toBeUndefined();
    expect(ix.nextQueued()?.msg_id).toBe('a');
    ix.fold(b, 'p');
    ix.dropFolded('b');
    expect(ix.liveState('b')).toBeNull();
  });

  it('next with a filter skips refused messages without losing them', () => {
    const ix = new MessageIndex();
    for (const [id, due] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      ix.enqueue(msg(id, due, { param1: id === 'b' ? 'free' : 'busy' }));
    expect(ix.nextQueued((m) => m.param1 === 'free')?.msg_id).toBe('b');
    expect(ix.queuedInOrder(3).map((m) => m.msg_id)).toEqual(['a', 'b', 'c']);
    expect(
      ix
        .queuedWhere((m) => m.param1 === 'busy')
        .map((m) => m.msg_id)
        .sort(),
    ).toEqual(['a', 'c']);
  });

  it('finished counts add up and never go below zero', () => {
    const ix = new MessageIndex();
    ix.setFinished('done', 3);
    ix.addFinished('done', 1);
    ix.addFinished('err', -2);
    expect(ix.counts()).toMatchObject({ done: 4, err: 0 });
  });
});
