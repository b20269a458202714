// The timers/ directory's refusals as rq doctor reads them: each entry that defines no timer, with why, forgotten once it is gone.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TimerDir } from '../../src/timers/timer-dir.js';
import { type TimerTable, newStats } from '../../src/timers/timer-table.js';

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
