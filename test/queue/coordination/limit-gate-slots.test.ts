// LimitGate's slots in this process: grants in their order, runs that end, withdrawals, releases retried and kept in order, and close.
import { describe, expect, it, vi } from 'vitest';
import { ID, type Harness, harness, msg, nope, ok, settle } from './limit-gate-harness.js';

describe('grants and releases', () => {
  async function waiting(h: Harness, ...ns: number[]) {
    h.answers.acquire = [{ granted: false, position: 1 }];
    await h.gate.reset();
    for (const n of ns) h.gate.park(msg(n), 'k');
    await settle();
  }

  it('onGranted takes only a waiter of that key not granted yet; grants start in their order', async () => {
    const h = harness();
    await waiting(h, 1, 2);
    expect(h.gate.onGranted(ID(9), 'k')).toBe(false);
    expect(h.gate.onGranted(ID(2), 'other')).toBe(false);
    expect(h.gate.onGranted(ID(2), 'k')).toBe(true);
    expect(h.gate.onGranted(ID(2), 'k')).toBe(false);
    expect(h.gate.onGranted(ID(1), 'k')).toBe(true);
    expect(h.pumps()).toBe(2);
    expect(h.gate.held()).toEqual([ID(2), ID(1)]);
    expect(h.gate.takeGranted()?.msg_id).toBe(ID(2));
    expect(h.index.unpark).toHaveBeenCalledWith(ID(2));
    expect(h.gate.heldKey(ID(2))).toBe('k');
    expect(h.gate.heldKey(ID(1))).toBeUndefined();
    expect(h.gate.waitingOf(ID(2))).toBeUndefined();
    expect(h.gate.held()).toEqual([ID(2), ID(1)]);
    expect(h.gate.takeGranted()?.msg_id).toBe(ID(1));
    expect(h.gate.takeGranted()).toBeUndefined();
    expect(h.gate.waitingList()).toEqual([]);
  });

  it('a run that ends gives its slot back once; an id holding nothing sends nothing', async () => {
    const h = harness();
    await waiting(h, 1);
    h.gate.onGranted(ID(1), 'k');
    h.gate.takeGranted();
    h.calls.length = 0;
    h.gate.ended(ID(1));
    h.gate.ended(ID(1));
    h.gate.ended(ID(5));
    await settle();
    expect(h.calls).toEqual([`release k q/${ID(1)}`]);
    expect(h.gate.held()).toEqual([]);
    expect(h.gate.heldKey(ID(1))).toBeUndefined();
  });

  it('withdraw gives back a place or a granted slot; an id not parked sends nothing', async () => {
    const h = harness();
    await waiting(h, 1, 2);
    h.gate.onGranted(ID(1), 'k');
    h.gate.onGranted(ID(2), 'k');
    h.calls.length = 0;
    h.gate.withdraw(ID(1));
    h.gate.withdraw(ID(7));
    await settle();
    expect(h.calls).toEqual([`release k q/${ID(1)}`]);
    expect(h.gate.held()).toEqual([ID(2)]);
    expect(h.gate.takeGranted()?.msg_id).toBe(ID(2));
    expect(h.gate.takeGranted()).toBeUndefined();
  });

  it('withdrawAll puts every parked message back in the que and gives its place back', async () => {
    const h = harness();
    await waiting(h, 1, 2);
    h.gate.onGranted(ID(1), 'k');
    h.calls.length = 0;
    h.gate.withdrawAll();
    await settle();
    expect(h.calls.sort()).toEqual([`release k q/${ID(1)}`, `release k q/${ID(2)}`]);
    expect(h.requeued()).toEqual([ID(1), ID(2)]);
    expect(h.gate.held()).toEqual([]);
    expect(h.gate.takeGranted()).toBeUndefined();
    expect(h.gate.waitingList()).toEqual([]);
  });

  it('a release is sent until rq-mgr says ok, 1 s then 2 s apart', async () => {
    vi.useFakeTimers();
    const h = harness();
    h.present.yes = false;
    await h.gate.reset();
    h.gate.park(msg(1), 'k');
    await vi.advanceTimersByTimeAsync(0);
    h.gate.takeGranted();
    h.answers.release = [new Error('down'), nope, ok];
    h.gate.ended(ID(1));
    await vi.advanceTimersByTimeAsync(0);
    const releases = () => h.calls.filter((c) => c.startsWith('release')).length;
    expect(releases()).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(releases()).toBe(2);
    await vi.advanceTimersByTimeAsync(2000);
    expect(releases()).toBe(3);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(releases()).toBe(3);
  });

  it('a second release of the same message goes out after the first is answered', async () => {
    const h = harness();
    h.present.yes = false;
    await h.gate.reset();
    h.gate.park(msg(1), 'k');
    await settle();
    h.gate.takeGranted();
    let first!: (a: unknown) => void;
    h.answers.release = [new Promise((r) => (first = r)), ok];
    h.gate.ended(ID(1));
    h.gate.park(msg(1), 'k');
    await settle();
    h.gate.withdraw(ID(1));
    await settle();
    expect(h.calls.filter((c) => c.startsWith('release')).length).toBe(1);
    first(ok);
    await settle();
    expect(h.calls.filter((c) => c.startsWith('release')).length).toBe(2);
  });

  it('a third release waits for the second, even once the first is answered', async () => {
    const h = harness();
    h.present.yes = false;
    await h.gate.reset();
    h.gate.park(msg(1), 'k');
    await settle();
    h.gate.takeGranted();
    let first!: (a: unknown) => void;
    let second!: (a: unknown) => void;
    h.answers.release = [new Promise((r) => (first = r)), new Promise((r) => (second = r)), ok];
    h.gate.ended(ID(1));
    h.gate.park(msg(1), 'k');
    await settle();
    h.gate.withdraw(ID(1));
    first(ok);
    await settle();
    // The second release is out and unanswered: an acquire of the same message waits for it.
    h.calls.length = 0;
    h.gate.park(msg(1), 'k');
    await settle();
    expect(h.calls).toEqual([]);
    second(ok);
    await settle();
    expect(h.calls).toEqual([`acquire q/${ID(1)}`]);
  });

  it('close stops the retries and lets nothing wait on the reset', async () => {
    vi.useFakeTimers();
    const h = harness();
    h.answers.acquire = [new Error('down')];
    h.gate.park(msg(1), 'k');
    h.gate.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(h.acquires).toEqual([]);
  });
});
