// The que split into ready and delayed heaps (rq-beyond §B2): order, promotion at the due, arrival kept, run-now's front.
import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/message/message.js';
import { SplitQue } from '../../../src/queue/index/split-que.js';

const msg = (id: string, due: number, priority?: number) => ({ msg_id: id, dest: 'q', due, ...(priority === undefined ? {} : { priority }) }) as Message;

describe('SplitQue', () => {
  it('orders ready messages by priority, due, arrival and keeps future ones behind them whatever their priority', () => {
    let now = 100_000;
    const q = new SplitQue(() => now);
    q.insert(msg('later-urgent', 200, -9));
    q.insert(msg('b', 50));
    q.insert(msg('a', 50));
    q.insert(msg('low', 10, 3));
    q.insert(msg('high', 90, -1));
    expect(q.ordered(10).map((m) => m.msg_id)).toEqual(['high', 'b', 'a', 'low', 'later-urgent']);
    expect(q.peek()?.msg_id).toBe('high');
    // At its due the delayed one joins the ready heap and its priority counts.
    now = 200_000;
    expect(q.peek()?.msg_id).toBe('later-urgent');
    expect(q.size).toBe(5);
  });

  it('a promoted message keeps its arrival among equals', () => {
    let now = 0;
    const q = new SplitQue(() => now);
    q.insert(msg('first', 5));
    q.insert(msg('second', 5));
    now = 5000;
    q.insert(msg('third', 5));
    expect(q.ordered(3).map((m) => m.msg_id)).toEqual(['first', 'second', 'third']);
  });

  it('find looks at ready ones first, then delayed by due; remove and re-insert re-key', () => {
    const q = new SplitQue(() => 10_000);
    q.insert(msg('r1', 1));
    q.insert(msg('d1', 20));
    q.insert(msg('d2', 30));
    expect(q.find((m) => m.msg_id.startsWith('d'))?.msg_id).toBe('d1');
    expect(q.find(() => false)).toBeUndefined();
    q.insert(msg('d2', 2));
    expect(q.ordered(5).map((m) => m.msg_id)).toEqual(['r1', 'd2', 'd1']);
    expect(q.remove('r1')?.msg_id).toBe('r1');
    expect(q.has('r1')).toBe(false);
    expect(q.get('d1')?.due).toBe(20);
    expect([...q.values()].map((m) => m.msg_id).sort()).toEqual(['d1', 'd2']);
  });

  it('a deadline expires at its very millisecond, not one after; earliest first, and only what is due', () => {
    let now = 9_999;
    // Deadlines in epoch ms (rq-beyond §B4: by when a queued message must start). The dispatcher's
    // one timer wakes at nextDeadline(): a message still kept at that millisecond would re-arm it at once.
    const deadline: Record<string, number> = { early: 10_000, late: 12_000 };
    const q = new SplitQue(
      () => now,
      (m) => deadline[m.msg_id] ?? null,
    );
    q.insert(msg('late', 1));
    q.insert(msg('early', 1));
    q.insert(msg('never', 1));
    expect(q.takeExpired()).toEqual([]);
    expect(q.nextDeadline()).toBe(10_000);
    now = 10_000;
    expect(q.takeExpired().map((m) => m.msg_id)).toEqual(['early']);
    expect(q.has('early')).toBe(false);
    expect(q.nextDeadline()).toBe(12_000);
    now = 12_000;
    expect(q.takeExpired().map((m) => m.msg_id)).toEqual(['late']);
    expect(q.nextDeadline()).toBeUndefined();
    expect([...q.values()].map((m) => m.msg_id)).toEqual(['never']);
  });

  it('size and has count both heaps; ordered stops at its limit across them', () => {
    const q = new SplitQue(() => 10_000);
    q.insert(msg('r1', 1));
    q.insert(msg('d1', 20));
    q.insert(msg('d2', 30));
    q.insert(msg('d3', 40));
    expect(q.size).toBe(4);
    expect([q.has('r1'), q.has('d1'), q.has('x')]).toEqual([true, true, false]);
    expect(q.ordered(2).map((m) => m.msg_id)).toEqual(['r1', 'd1']);
  });

  it('rekeyDeadlines reads every queued message its deadline again (a new default max_age)', () => {
    let maxAge: number | null = null;
    const q = new SplitQue(
      () => 10_000,
      (m) => (maxAge === null ? null : Number(m.due) * 1000 + maxAge),
    );
    q.insert(msg('r1', 1));
    q.insert(msg('d1', 20));
    expect(q.nextDeadline()).toBeUndefined();
    maxAge = 5000;
    q.rekeyDeadlines();
    expect(q.nextDeadline()).toBe(6000);
    expect(q.takeExpired().map((m) => m.msg_id)).toEqual(['r1']);
    expect(q.nextDeadline()).toBe(25_000);
  });

  it("front is the first message's due and priority, or undefined when empty", () => {
    const q = new SplitQue(() => 10_000);
    expect(q.front()).toBeUndefined();
    q.insert(msg('x', 4, 2));
    q.insert(msg('y', 8, -1));
    expect(q.front()).toEqual({ due: 8, priority: -1 });
  });
});
