// The timers/ directory's refusals as rq doctor reads them: each entry that defines no timer, with why, forgotten once it is gone.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { TimerDir } from '../../src/timers/timer-dir.js';
import { TimerTable, newStats } from '../../src/timers/timer-table.js';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-timer-dir-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** A table that defines nothing: the refusals are the subject here. */
const emptyTable = { files: () => [], fileOf: () => null, suspend: () => undefined, remove: () => undefined, define: () => undefined } as unknown as TimerTable;

describe('TimerDir.refusals', () => {
  it('lists each refused or misnamed entry in name order, its reason without its name; a rescan forgets those removed meanwhile', async () => {
    const d = new TimerDir({ dir, table: emptyTable, stats: newStats(), allowShortPeriod: false, log: pino({ level: 'silent' }) });
    try {
      await fs.writeFile(path.join(dir, 'two.dots.json'), '{}');
      await fs.writeFile(path.join(dir, 'plain.json'), '{}');
      await d.rescan();
      expect(d.refusals()).toEqual([
        {
          file: 'plain.json',
          reason: 'not a symlink; a timer is a symlink to its definition file (ln -s /path/to/plain.json timers/plain.json)',
          fix: 'correct it (or the file it links to), or remove it: rq-timers reads it again at once',
        },
        {
          file: 'two.dots.json',
          reason: 'ignored: a timer file is named <name>.json or <name>.yaml with exactly one dot',
          fix: 'rename it to <name>.json or <name>.yaml (one dot), or remove it',
        },
      ]);
      await fs.rm(path.join(dir, 'two.dots.json'));
      await fs.rm(path.join(dir, 'plain.json'));
      await d.rescan();
      expect(d.refusals()).toEqual([]);
    } finally {
      await d.close();
    }
  });
});

describe('TimerDir refusals, more', () => {
  const quiet = pino({ level: 'silent' });
  /** A definition file outside timers/ and its link in it. */
  const link = async (name: string, def: unknown) => {
    const target = path.join(dir, '..', `${path.basename(dir)}-${name}`);
    await fs.writeFile(target, JSON.stringify(def));
    await fs.symlink(target, path.join(dir, name));
    return target;
  };

  it('lists them in name order, not in the order they were found (refused ones before misnamed ones)', async () => {
    const d = new TimerDir({ dir, table: emptyTable, stats: newStats(), allowShortPeriod: false, log: quiet });
    try {
      for (const f of ['zeta.json', 'mid.json', 'alpha.b.json', 'omega.b.yaml']) await fs.writeFile(path.join(dir, f), '{}');
      await d.rescan();
      expect(d.refusals().map((r) => r.file)).toEqual(['alpha.b.json', 'mid.json', 'omega.b.yaml', 'zeta.json']);
    } finally {
      await d.close();
    }
  });

  it("an editor's backup or swap file, or any file not ending in .json or .yaml, is no refusal", async () => {
    const d = new TimerDir({ dir, table: emptyTable, stats: newStats(), allowShortPeriod: false, log: quiet });
    try {
      for (const f of ['nightly.json~', 'nightly.json.swp', 'nightly.yaml.bak', 'README', 'notes.txt']) await fs.writeFile(path.join(dir, f), '{}');
      await d.rescan();
      expect(d.refusals()).toEqual([]);
    } finally {
      await d.close();
    }
  });

  it('a timer whose file turns invalid stops firing and is listed; a rescan counts it once, and forgets it once its link is gone', async () => {
    const stats = newStats();
    const table = new TimerTable({ deliver: async () => ({ ok: true, id: 'x' }), stats, log: quiet });
    const d = new TimerDir({ dir, table, stats, allowShortPeriod: false, log: quiet });
    const target = await link('hourly.json', { period: 3600, msg: { dest: 'q' } });
    try {
      // Read again unchanged (a SIGHUP), the file that defines the timer is not taken for a second one.
      await d.rescan();
      await d.rescan();
      expect(table.list().map(([name]) => name)).toEqual(['hourly']);
      expect(d.refusals()).toEqual([]);
      await fs.writeFile(target, JSON.stringify({ period: 'hourly', msg: { dest: 'q' } }));
      await d.rescan();
      await d.rescan();
      expect(table.list()).toEqual([]);
      expect(d.refusals().map((r) => r.file)).toEqual(['hourly.json']);
      expect(stats.invalid).toBe(1);
      // Its link removed while nothing watched (a rescan is what SIGHUP runs): forgotten, timer and refusal alike.
      await fs.rm(path.join(dir, 'hourly.json'));
      await d.rescan();
      expect(table.fileOf('hourly')).toBeNull();
      expect(d.refusals()).toEqual([]);
    } finally {
      await d.close();
      await table.close();
      await fs.rm(target, { force: true });
    }
  });

  it('a second file for a timer name is refused while the first defines it, and defines it once the first is removed', async () => {
    const stats = newStats();
    const table = new TimerTable({ deliver: async () => ({ ok: true, id: 'x' }), stats, log: quiet });
    const d = new TimerDir({ dir, table, stats, allowShortPeriod: false, log: quiet, settleMs: 1 });
    const targets = [await link('dup.json', { period: 3600, msg: { dest: 'q', param1: 'json' } })];
    const files = () => d.refusals().map((r) => r.file);
    try {
      await d.start();
      expect(table.fileOf('dup')).toBe('dup.json');
      targets.push(await link('dup.yaml', { period: 3600, msg: { dest: 'q', param1: 'yaml' } }));
      await waitFor(() => files().includes('dup.yaml'), 'dup.yaml refused');
      expect(d.refusals()).toEqual([
        {
          file: 'dup.yaml',
          reason: 'timer "dup" is already defined by timers/dup.json; remove one of them',
          fix: 'correct it (or the file it links to), or remove it: rq-timers reads it again at once',
        },
      ]);
      // The refused one takes nothing from the timer, refused or removed.
      expect(table.list().map(([name]) => name)).toEqual(['dup']);
      await fs.rm(path.join(dir, 'dup.yaml'));
      await waitFor(() => files().length === 0, 'dup.yaml forgotten');
      expect(table.fileOf('dup')).toBe('dup.json');
      expect(table.list().map(([name]) => name)).toEqual(['dup']);
      await fs.symlink(targets[1], path.join(dir, 'dup.yaml'));
      await waitFor(() => files().includes('dup.yaml'), 'dup.yaml refused again');
      // Only the holder's link goes (its event alone): the other file is read again and defines the timer.
      await fs.rm(path.join(dir, 'dup.json'));
      await waitFor(() => table.fileOf('dup') === 'dup.yaml', 'dup.yaml to define the timer');
      expect(files()).toEqual([]);
      expect(table.list().map(([name]) => name)).toEqual(['dup']);
    } finally {
      await d.close();
      await table.close();
      for (const t of targets) await fs.rm(t, { force: true });
    }
  });
});
