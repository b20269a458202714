import { describe, expect, it } from 'vitest';
import { QueIndex } from '../../../src/queue/index/que-index.js';
import type { Message } from '../../../src/message/message.js';

const msg = (id: string, due: number, extra: Partial<Message> = {}): Message => ({
  msg_id: id,
  dest: 'q',
  orig_msg_id: id,
  count: 0,
  max_count: 15,
  due,
  ...extra,
});

describe('QueIndex', () => {
  it('orders by due, ties in arrival order', () => {
    const q = new QueIndex();
    q.insert(msg('c', 5));
    q.insert(msg('a', 1));
    q.insert(msg('b', 5));
    q.insert(msg('d', 1));
    expect(q.ordered(10).map((m) => m.msg_id)).toEqual(['a', 'd', 'c', 'b']);
    expect(q.peek()?.msg_id).toBe('a');
  });

  it('removes and re-keys lazily', () => {
    const q = new QueIndex();
    for (let i = 0; i < 10; i++) q.insert(msg(`m${i}`, i));
    q.remove('m0');
    expect(q.peek()?.msg_id).toBe('m1');
    const m9 = q.get('m9')!;
    m9.due = -1;
    q.insert(m9);
    expect(q.peek()?.msg_id).toBe('m9');
    expect(q.size).toBe(9);
    expect(q.minDue()).toBe(-1);
  });

  it('find skips refused messages and keeps them', () => {
    const q = new QueIndex();
    q.insert(msg('a1', 1, { param1: 'a' }));
    q.insert(msg('b1', 2, { param1: 'b' }));
    q.insert(msg('a2', 3, { param1: 'a' }));
    expect(q.find((m) => m.param1 !== 'a')?.msg_id).toBe('b1');
    expect(q.find((m) => m.param1 === 'zzz')).toBeUndefined();
    expect(q.ordered(10).map((m) => m.msg_id)).toEqual(['a1', 'b1', 'a2']);
  });

  it('stays consistent over many random operations', () => {
    const q = new QueIndex();
    const model = new Map<string, number>();
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 5000; i++) {
      const id = `m${Math.floor(rnd() * 300)}`;
      const r = rnd();
      if (r < 0.5) {
        const due = Math.floor(rnd() * 100);
        q.insert(msg(id, due));
        model.set(id, due);
      } else if (r < 0.8) {
        q.remove(id);
        model.delete(id);
      } else {
        const top = q.peek();
        const min = Math.min(...model.values());
        if (model.size) expect(top && model.get(top.msg_id)).toBe(min);
        else expect(top).toBeUndefined();
      }
    }
    expect(q.size).toBe(model.size);
  });

  it('many ties come out in arrival order, whatever the heap shape', () => {
    const q = new QueIndex();
    const ids = Array.from({ length: 50 }, (_, i) => `t${i}`);
    for (const id of ids) q.insert(msg(id, 7));
    const out: string[] = [];
    for (let m = q.peek(); m; m = q.peek()) out.push(q.remove(m.msg_id)!.msg_id);
    expect(out).toEqual(ids);
  });

  it('answers for absent ids and an empty or all-stale heap without throwing', () => {
    const q = new QueIndex();
    expect(q.get('nope')).toBeUndefined();
    expect(q.minDue()).toBeUndefined();
    q.insert(msg('a', 1));
    q.remove('a');
    expect(q.find(() => true)).toBeUndefined();
    expect(q.peek()).toBeUndefined();
  });

  it('ordered(limit) gives at most limit messages', () => {
    const q = new QueIndex();
    for (let i = 0; i < 5; i++) q.insert(msg(`m${i}`, i));
    expect(q.ordered(2).map((m) => m.msg_id)).toEqual(['m0', 'm1']);
  });

  it('re-keying keeps the heap within max(64, 2 × live) entries, and small heaps are not rebuilt', () => {
    const q = new QueIndex();
    const m = msg('one', 0);
    q.insert(m);
    for (let i = 1; i <= 10; i++) {
      m.due = i;
      q.insert(m);
    }
    // 11 entries for one live message: stale, but under 64, so left for the pops to drop.
    expect(q.entries).toBe(11);
    for (let i = 11; i <= 64; i++) {
      m.due = i;
      q.insert(m);
    }
    // 65 entries for one live message: over both bounds, so the insert that made the 65th rebuilt.
    expect(q.entries).toBe(1);
    for (let i = 0; i < 63; i++) q.insert(msg(`x${i}`, 100 + i));
    expect(q.size).toBe(64);
    for (let i = 0; i < 10; i++) {
      m.due = 200 + i;
      q.insert(m);
    }
    // 74 entries, 64 live: over 64 but under 2 × 64, so the stale ones wait for their turn.
    expect(q.entries).toBe(74);
    expect(q.ordered(100)).toHaveLength(64);
  });

  it('a heap of exactly twice the live messages is not rebuilt; one more entry is', () => {
    const q = new QueIndex();
    const ms = Array.from({ length: 40 }, (_, i) => msg(`m${i}`, i));
    for (const m of ms) q.insert(m);
    for (const m of ms) {
      m.due = Number(m.due) + 100;
      q.insert(m);
    }
    expect(q.entries).toBe(80);
    ms[0].due = 1000;
    q.insert(ms[0]);
    expect(q.entries).toBe(40);
  });
});
