// The run cgroups kept ready, on real cgroups under this process's own: names, taken names skipped, one made ahead at a time, an ended run's kept only when empty, unchanged and there is room, nothing after a close.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { killAll, removeCgroup } from '../../../src/queue/launch/cgroup-fs.js';
import { RunCgroupStock, asNew } from '../../../src/queue/launch/run-cgroup-stock.js';
import { HOME, NO_CGROUPS, T } from './launcher-harness.js';

describe.skipIf(NO_CGROUPS !== null)(`RunCgroupStock${NO_CGROUPS ? ` (skipped: ${NO_CGROUPS})` : ''}`, () => {
  const parent = HOME.ok ? path.join(HOME.dir, `rq-stock-test-${process.pid}`) : '';
  let stock: RunCgroupStock;
  beforeEach(() => {
    fs.mkdirSync(parent);
    stock = new RunCgroupStock(parent);
  });
  afterEach(async () => {
    await stock.close();
    killAll(parent);
    await removeCgroup(parent, T);
  });

  const runs = () =>
    fs
      .readdirSync(parent)
      .filter((n) => /^run-\d+$/.test(n))
      .sort();
  const at = (n: number) => path.join(parent, `run-${n}`);

  it('names cgroups run-1, run-2…; skips up to three names taken, and fails on a fourth or on any other error, one name used', () => {
    expect(stock.make()).toBe(at(1));
    for (const n of [2, 3, 4]) fs.mkdirSync(at(n));
    expect(stock.make()).toBe(at(5));
    for (const n of [6, 7, 8, 9]) fs.mkdirSync(at(n));
    expect(() => stock.make()).toThrow(/EEXIST/);
    expect(() => stock.make(path.join(parent, 'missing'))).toThrow(/ENOENT/);
    expect(stock.make()).toBe(at(11));
  });

  it('hands out the cgroup kept last first, passes over one removed meanwhile, and has none when empty', () => {
    const [a, b, c] = [stock.make(), stock.make(), stock.make()];
    for (const dir of [a, b, c]) expect(stock.keep(dir)).toBe(true);
    fs.rmdirSync(c);
    expect([stock.take(), stock.take(), stock.take()]).toEqual([b, a, null]);
  });

  it('makes one ahead only when none is ready, one at a time', async () => {
    await Promise.all([stock.restock(), stock.restock()]);
    expect(runs()).toEqual(['run-1']);
    await stock.restock();
    expect(runs()).toEqual(['run-1']);
    expect(stock.take()).toBe(at(1));
    await stock.restock();
    expect(runs()).toEqual(['run-1', 'run-2']);
  });

  it('keeps an ended run’s cgroup only when no process is in it, and at most eight', async () => {
    const busy = stock.make();
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      fs.writeFileSync(path.join(busy, 'cgroup.procs'), String(sleeper.pid));
      expect(stock.keep(busy)).toBe(false);
    } finally {
      sleeper.kill('SIGKILL');
    }
    const made = Array.from({ length: 9 }, () => stock.make());
    expect(made.map((dir) => stock.keep(dir))).toEqual([...Array(8).fill(true), false]);
  });

  it('keeps none a run changed: a cgroup below it, frozen, made threaded, or a limit set on its subtree', () => {
    const changed = (change: (dir: string) => void) => {
      const dir = stock.make();
      expect(asNew(dir)).toBe(true);
      change(dir);
      return stock.keep(dir);
    };
    const write = (file: string, text: string) => (dir: string) => fs.writeFileSync(path.join(dir, file), text);
    expect(changed((dir) => fs.mkdirSync(path.join(dir, 'left')))).toBe(false);
    expect(changed(write('cgroup.freeze', '1'))).toBe(false);
    expect(changed(write('cgroup.max.descendants', '0'))).toBe(false);
    expect(changed(write('cgroup.max.depth', '0'))).toBe(false);
    // A cgroup below it made and removed again leaves it as it was.
    expect(
      changed((dir) => {
        fs.mkdirSync(path.join(dir, 'gone'));
        fs.rmdirSync(path.join(dir, 'gone'));
      }),
    ).toBe(true);
    // Last: a threaded cgroup makes its parent a threaded domain, and its siblings invalid ones.
    expect(changed(write('cgroup.type', 'threaded'))).toBe(false);
    expect(asNew(path.join(parent, 'missing'))).toBe(false);
  });

  it('after a close makes none, keeps none, and lets a cgroup made meanwhile go with the parent', async () => {
    const making = stock.restock();
    await stock.close();
    await making;
    expect(stock.take()).toBeNull();
    await stock.restock();
    expect(runs()).toEqual(['run-1']);
    expect(stock.keep(stock.make())).toBe(false);
  });
});
