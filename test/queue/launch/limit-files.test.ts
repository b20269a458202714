// The files of a run's cgroup v1 directories as the kernel lays them out: which weight file an io_weight goes into, and on what scale.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { setLimits, weightFile } from '../../../src/queue/launch/limit-files.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A blkio cgroup with `files` and their kernel defaults, in a plain directory: no host rq is tested
 * on schedules a disk by bfq, nor builds CFQ (gone since Linux 5.0) beside it.
 */
function blkio(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rq-blkio-'));
  made.push(dir);
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
  return dir;
}
const read = (dir: string, f: string) => fs.readFileSync(path.join(dir, f), 'utf8');

describe('io_weight on a cgroup v1 blkio hierarchy', () => {
  it("goes into BFQ's own weight, on its scale, where the old CFQ's blkio.weight is there too (a kernel before 5.0 building both)", () => {
    const dir = blkio({ 'blkio.weight': '500', 'blkio.bfq.weight': '100' });
    expect(weightFile(dir)).toBe('blkio.bfq.weight');
    const slot = { weighted: false, holding: false };
    setLimits(new Map([['blkio', dir]]), { io_weight: 200 }, slot);
    expect([read(dir, 'blkio.bfq.weight'), read(dir, 'blkio.weight')]).toEqual(['200', '500']);
    // Capped at BFQ's 1000; a run without one gets the default share back in the reused cgroup.
    setLimits(new Map([['blkio', dir]]), { io_weight: 5000 }, slot);
    expect(read(dir, 'blkio.bfq.weight')).toBe('1000');
    // A kernel file takes each write whole; a plain file written in place keeps what a shorter value does not cover.
    fs.truncateSync(path.join(dir, 'blkio.bfq.weight'));
    setLimits(new Map([['blkio', dir]]), {}, slot);
    expect(read(dir, 'blkio.bfq.weight')).toBe('100');
  });

  it('is not enforceable where only CFQ weighs (blkio.weight alone): bfq would ignore it', () => {
    const dir = blkio({ 'blkio.weight': '500' });
    expect(weightFile(dir)).toBeNull();
    setLimits(new Map([['blkio', dir]]), { io_weight: 200 }, { weighted: false, holding: false });
    expect(read(dir, 'blkio.weight')).toBe('500');
  });
});
