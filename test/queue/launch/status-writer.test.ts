// LatestWriter: a burst of status texts costs one write per turn, the latest wins, and a text whose write failed is known as lost until a newer one is written.
import { describe, expect, it } from 'vitest';
import { LatestWriter } from '../../../src/queue/launch/status-writer.js';

const noSpace = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

describe('LatestWriter', () => {
  it('writes the first text and then only the latest of those set meanwhile', async () => {
    const written: Array<string | null> = [];
    const w = new LatestWriter(async (t) => void written.push(t));
    for (const t of ['a', 'b', 'c', null, 'd']) w.set(t);
    await w.flush();
    expect(written).toEqual(['a', 'd']);
    expect(w.lost).toBe(false);
  });

  it('says the latest text is lost when its write failed, and no longer once a newer one is written', async () => {
    let full = true;
    const written: Array<string | null> = [];
    const w = new LatestWriter(async (t) => {
      if (full) throw noSpace();
      written.push(t);
    });
    w.set('done wrote');
    await w.flush();
    expect(w.lost).toBe(true);
    full = false;
    w.set('later');
    await w.flush();
    expect(w.lost).toBe(false);
    expect(written).toEqual(['later']);
  });

  it('an older text written does not hide that the latest one failed', async () => {
    const w = new LatestWriter(async (t) => {
      if (t === 'last') throw noSpace();
    });
    w.set('first');
    w.set('last');
    await w.flush();
    expect(w.lost).toBe(true);
  });
});
