// ReadOnce: one read of the disk however many ask, the changes heard during it applied over what it found in the order heard, and a failed read forgetting them.
import { describe, expect, it } from 'vitest';
import { ReadOnce } from '../../../src/queue/observers/read-once.js';
import { gate } from '../../helpers/gate.js';

/** A ReadOnce over a list whose read waits on a gate, and counts how often it ran. */
function heldRead(found: string[] = ['read']) {
  let reads = 0;
  let held = gate();
  let fail: Error | null = null;
  const once = new ReadOnce(async () => {
    reads++;
    await held.wait;
    if (fail) throw fail;
    return [...found];
  });
  return {
    once,
    reads: () => reads,
    finish: () => held.open(),
    failNext(err: Error) {
      fail = err;
    },
    holdAgain() {
      fail = null;
      held = gate();
    },
  };
}

describe('ReadOnce', () => {
  it('reads once for every caller that asks while the read is under way, and not again after', async () => {
    const r = heldRead();
    expect(r.once.current).toBeNull();
    expect(r.once.underWay).toBe(false);
    const first = r.once.get();
    const second = r.once.get();
    expect(r.once.underWay).toBe(true);
    r.finish();
    const [a, b] = await Promise.all([first, second]);
    expect(a).toBe(b);
    expect(await r.once.get()).toBe(a);
    expect(r.once.current).toBe(a);
    expect(r.once.underWay).toBe(false);
    expect(r.reads()).toBe(1);
  });

  it('drops a change heard before any read, replays those heard during it in order, and applies later ones at once', async () => {
    const r = heldRead();
    r.once.apply((v) => void v.push('before'));
    const view = r.once.get();
    r.once.apply((v) => void v.push('during 1'));
    r.once.apply((v) => void v.push('during 2'));
    r.finish();
    expect(await view).toEqual(['read', 'during 1', 'during 2']);
    r.once.apply((v) => void v.push('after'));
    expect(r.once.current).toEqual(['read', 'during 1', 'during 2', 'after']);
  });

  it('awaits each replayed change before the next, and a change heard meanwhile comes after them', async () => {
    const r = heldRead();
    const view = r.once.get();
    const slow = gate();
    r.once.apply(async (v) => {
      await slow.wait;
      v.push('slow');
    });
    r.once.apply((v) => void v.push('quick'));
    r.finish();
    // The read has finished and the replay waits on the slow change: the view is not out yet, so this one is held too.
    await new Promise((resolve) => setImmediate(resolve));
    expect(r.once.current).toBeNull();
    r.once.apply((v) => void v.push('heard during the replay'));
    slow.open();
    expect(await view).toEqual(['read', 'slow', 'quick', 'heard during the replay']);
  });

  it('rejects every caller of a failed read, forgets what it heard, and reads again at the next call', async () => {
    const r = heldRead();
    r.failNext(Object.assign(new Error('too many open files'), { code: 'EMFILE' }));
    const first = r.once.get();
    const second = r.once.get();
    r.once.apply((v) => void v.push('stale'));
    r.finish();
    await expect(first).rejects.toThrow('too many open files');
    await expect(second).rejects.toThrow('too many open files');
    expect(r.once.underWay).toBe(false);
    expect(r.once.current).toBeNull();
    r.holdAgain();
    const again = r.once.get();
    r.finish();
    expect(await again).toEqual(['read']);
    expect(r.reads()).toBe(2);
  });

  it('holds no change heard while a failed read is let go, whichever turn it comes in: none is replayed over the next read', async () => {
    // A change may come in any microtask after the read failed; each depth is tried in turn.
    for (let depth = 0; depth < 8; depth++) {
      let fail = true;
      const once = new ReadOnce<string[]>(async () => {
        await Promise.resolve();
        if (!fail) return ['read'];
        let hop: Promise<void> = Promise.resolve();
        for (let i = 0; i < depth; i++) hop = hop.then(() => undefined);
        void hop.then(() => once.apply((v) => void v.push('stale')));
        throw new Error('EMFILE');
      });
      await once.get().catch(() => undefined);
      // Every turn of the failure played out before the next read begins: a change held now was held by the failed read.
      await new Promise((resolve) => setImmediate(resolve));
      fail = false;
      expect(await once.get(), `a change ${depth} turns after the failure`).toEqual(['read']);
    }
  });
});
