// DISK FULL: a write that finds no space is retried with a doubling backoff while the state is held; any other error passes; a stop ends the waiting.
import type { Logger } from 'pino';
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

/** A probe that finds room once `room.yes` says so, counting its calls. */
function probeOf(room: { yes: boolean }) {
  const probe = Object.assign(
    async () => {
      probe.calls += 1;
      if (!room.yes) throw noSpace();
    },
    { calls: 0 },
  );
  return probe;
}

/** A DiskFull whose state changes are recorded, with a promise for the state going. */
function diskFull(probe: () => Promise<void>) {
  const changes: boolean[] = [];
  let cleared!: () => void;
  const gone = new Promise<void>((r) => (cleared = r));
  const disk: DiskFull = new DiskFull(() => {
    changes.push(disk.full);
    if (!disk.full) cleared();
  }, probe);
  return { disk, changes, gone };
}

describe('DiskFull', () => {
  it('holds the state while a write fails for want of space, retrying at 100 ms doubling, and clears it when the probe finds room', async () => {
    const { disk, changes, gone } = diskFull(probeOf({ yes: true }));
    const at: number[] = [];
    let fails = 4;
    const t0 = Date.now();
    const result = await disk.retry('status', async () => {
      at.push(Date.now() - t0);
      if (fails-- > 0) throw noSpace();
      return 'written';
    });
    expect(result).toBe('written');
    await gone;
    expect(changes).toEqual([true, false]);
    expect(at).toHaveLength(5);
    // 100, 200, 400, 800 ms between tries: each gap at least its delay (timers never fire early).
    const gaps = at.slice(1).map((t, i) => t - at[i]);
    gaps.forEach((g, i) => expect(g).toBeGreaterThanOrEqual(FIRST_RETRY_MS * 2 ** i - 2));
    expect(MAX_RETRY_MS).toBe(5000);
  });

  it('stays DISK FULL until every waiting write is done', async () => {
    const { disk, changes, gone } = diskFull(probeOf({ yes: true }));
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
    await gone;
    expect(changes).toEqual([true, false]);
  });

  it('a waiting write that goes through is no evidence of room: the state lasts until the probe finds some', async () => {
    const room = { yes: false };
    const probe = probeOf(room);
    const { disk, changes, gone } = diskFull(probe);
    let fails = 1;
    // Written into blocks the file already had, say: it goes through on a disk that is still full.
    await disk.retry('status', async () => {
      if (fails-- > 0) throw noSpace();
    });
    expect(disk.full).toBe(true);
    expect(changes).toEqual([true]);
    room.yes = true;
    await gone;
    expect(changes).toEqual([true, false]);
  });

  it('a probe during which space was refused again proves nothing: another one must find room', async () => {
    const probing: Array<() => void> = [];
    let asked!: () => void;
    let nextAsk = new Promise<void>((r) => (asked = r));
    const { disk, changes, gone } = diskFull(
      () =>
        new Promise<void>((resolve) => {
          probing.push(resolve);
          asked();
        }),
    );
    disk.waitForRoom('create', noSpace());
    await nextAsk;
    nextAsk = new Promise<void>((r) => (asked = r));
    disk.waitForRoom('create', noSpace());
    probing[0]();
    await nextAsk;
    expect(disk.full).toBe(true);
    expect(probing).toHaveLength(2);
    probing[1]();
    await gone;
    expect(changes).toEqual([true, false]);
  });

  it('noted: a refused write that is not repeated holds the state until the probe finds room; any other error passes untouched', async () => {
    const room = { yes: false };
    const { disk, changes, gone } = diskFull(probeOf(room));
    const eio = Object.assign(new Error('EIO'), { code: 'EIO' });
    expect(disk.noted('status of x', eio)).toBe(eio);
    expect(disk.full).toBe(false);
    const full = noSpace();
    expect(disk.noted('status of x', full)).toBe(full);
    expect(disk.noted('create', noSpace())).toBeInstanceOf(Error);
    expect(disk.full).toBe(true);
    expect(disk.why).toBe('create: ENOSPC: no space left on device, write');
    room.yes = true;
    await gone;
    expect(changes).toEqual([true, false]);
  });

  it('retries a write short of file descriptors (EMFILE, ENFILE; a spool error caused by one too) without entering the state, and says so once', async () => {
    const warned: string[] = [];
    const log = { warn: (_o: object, m: string) => warned.push(m), info: () => undefined } as unknown as Logger;
    const changes: boolean[] = [];
    const disk: DiskFull = new DiskFull(() => changes.push(disk.full), probeOf({ yes: true }), log);
    const short = (code: string) => RqError.of('RQ_ERR_DISK', 'sync', code).causedBy(Object.assign(new Error(`${code}: too many open files`), { code }));
    const codes = ['EMFILE', 'ENFILE', 'EMFILE'];
    let tries = 0;
    const result = await disk.retry('sync of m in done', async () => {
      tries += 1;
      const code = codes.shift();
      if (code) throw short(code);
      return 'synced';
    });
    expect(result).toBe('synced');
    expect(tries).toBe(4);
    expect(changes).toEqual([]);
    expect(disk.full).toBe(false);
    expect(warned).toEqual(['a write ending a run is short of file descriptors: tried again']);
  });

  it('a stop ends a write waiting for descriptors: it is thrown, as any failure once the queue stops', async () => {
    const { disk } = diskFull(probeOf({ yes: true }));
    const pending = disk.retry('x', async () => Promise.reject(Object.assign(new Error('EMFILE'), { code: 'EMFILE' })));
    await new Promise((r) => setImmediate(r));
    disk.close();
    await expect(pending).rejects.toThrow('EMFILE');
  });

  it('throws any other error at once, without entering the state', async () => {
    const { disk, changes } = diskFull(probeOf({ yes: true }));
    await expect(disk.retry('x', async () => Promise.reject(Object.assign(new Error('EIO'), { code: 'EIO' })))).rejects.toThrow('EIO');
    expect(changes).toEqual([]);
  });

  it('a stop wakes the waiting writes, which give up after one more try; the state is not lifted without room', async () => {
    const room = { yes: false };
    const { disk, changes } = diskFull(probeOf(room));
    const pending = disk.retry('x', async () => Promise.reject(noSpace()));
    await new Promise((r) => setImmediate(r));
    disk.close();
    await expect(pending).rejects.toThrow('ENOSPC');
    expect(disk.full).toBe(true);
    expect(changes).toEqual([true]);
  });

  it('waitForRoom enters the state at once and leaves it when the probe succeeds', async () => {
    let probes = 0;
    const { disk, changes, gone } = diskFull(async () => {
      probes += 1;
      if (probes < 2) throw noSpace();
    });
    disk.waitForRoom('start', noSpace());
    expect(disk.full).toBe(true);
    await gone;
    expect(probes).toBe(2);
    expect(changes).toEqual([true, false]);
    expect(disk.why).toBe('start: ENOSPC: no space left on device, write');
  });
});
