// DISK FULL: a write that finds no space is retried with a doubling backoff while the state is held; any other error passes; a stop ends the waiting.
import { describe, expect, it } from 'vitest';
import { RqError } from '../../../src/errors.js';
import { DiskFull, FIRST_RETRY_MS, MAX_RETRY_MS, isNoSpace } from '../../../src/queue/status/disk-full.js';

const noSpace = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

describe('isNoSpace', () => {
  it('knows ENOSPC and EDQUOT, also as the cause of a spool error', () => {
    expect(isNoSpace(noSpace())).toBe(true);
    expect(isNoSpace(Object.assign(new Error('quota'), { code: 'EDQUOT' }))).toBe(true);
    expect(isNoSpace(RqError.of('RQ_ERR_DISK', 'move', 'ENOSPC').causedBy(noSpace()))).toBe(true);
    expect(isNoSpace(Object.assign(new Error('io'), { code: 'EIO' }))).toBe(false);
    expect(isNoSpace(null)).toBe(false);
  });
});

describe('DiskFull', () => {
  it('holds the state while a write fails for want of space, retrying at 100 ms doubling, and clears it when the write succeeds', async () => {
    const changes: boolean[] = [];
    const disk = new DiskFull(() => changes.push(disk.full));
    const at: number[] = [];
    let fails = 4;
    const t0 = Date.now();
    const result = await disk.retry('status', async () => {
      at.push(Date.now() - t0);
      if (fails-- > 0) throw noSpace();
      return 'written';
    });
    expect(result).toBe('written');
    expect(changes).toEqual([true, false]);
    expect(at).toHaveLength(5);
    // 100, 200, 400, 800 ms between tries: each gap at least its delay (timers never fire early).
    const gaps = at.slice(1).map((t, i) => t - at[i]);
    gaps.forEach((g, i) => expect(g).toBeGreaterThanOrEqual(FIRST_RETRY_MS * 2 ** i - 2));
    expect(MAX_RETRY_MS).toBe(5000);
  });

  it('stays DISK FULL until every waiting write is done', async () => {
    const changes: boolean[] = [];
    const disk = new DiskFull(() => changes.push(disk.full));
    let room = false;
    const write = async () => {
      if (!room) throw noSpace();
    };
    const a = disk.retry('a', write);
    const b = disk.retry('b', write);
    await new Promise((r) => setImmediate(r));
    expect(disk.full).toBe(true);
    room = true;
    await Promise.all([a, b]);
    expect(disk.full).toBe(false);
    expect(changes).toEqual([true, false]);
  });

  it('throws any other error at once, without entering the state', async () => {
    const changes: boolean[] = [];
    const disk = new DiskFull(() => changes.push(disk.full));
    await expect(disk.retry('x', async () => Promise.reject(Object.assign(new Error('EIO'), { code: 'EIO' })))).rejects.toThrow('EIO');
    expect(changes).toEqual([]);
  });

  it('a stop wakes the waiting writes, which give up after one more try', async () => {
    const disk = new DiskFull(() => undefined);
    const pending = disk.retry('x', async () => Promise.reject(noSpace()));
    await new Promise((r) => setImmediate(r));
    disk.close();
    await expect(pending).rejects.toThrow('ENOSPC');
    expect(disk.full).toBe(false);
  });

  it('waitForRoom enters the state at once and leaves it when the probe succeeds', async () => {
    let cleared!: () => void;
    const done = new Promise<void>((r) => (cleared = r));
    const changes: boolean[] = [];
    const disk = new DiskFull(() => {
      changes.push(disk.full);
      if (!disk.full) cleared();
    });
    let probes = 0;
    disk.waitForRoom('start', noSpace(), async () => {
      probes += 1;
      if (probes < 2) throw noSpace();
    });
    expect(disk.full).toBe(true);
    await done;
    expect(probes).toBe(2);
    expect(changes).toEqual([true, false]);
  });
});
