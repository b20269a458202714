// Shared by the CreateJournal tests: a fresh journal dir for each test, its records, and the segments on disk.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { JournalRecord } from '../../src/spool/journal-records.js';

/** Hands `use` a journal dir (not made yet) in a fresh temp dir before each test, and removes it after. */
export function journalDirPerTest(use: (dir: string) => void): void {
  let dir = '';
  beforeEach(async () => {
    dir = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'rq-journal-')), 'journal');
    use(dir);
  });
  afterEach(() => fs.rm(path.dirname(dir), { recursive: true, force: true }));
}

/** The segment files in `dir`, by name. */
export const segmentsIn = async (dir: string): Promise<string[]> => (await fs.readdir(dir)).sort();

/** The nth record of a test. */
export const rec = (n: number): JournalRecord => ({
  id: `20261126.1200.00.000.${n}`,
  state: 'que',
  msg: { msg_id: `20261126.1200.00.000.${n}`, dest: 'q' } as never,
});

/** What a failing disk answers `call`: EIO, as a rejected promise. */
export const eio = (call: string): Promise<never> => Promise.reject(Object.assign(new Error(`EIO: i/o error, ${call}`), { code: 'EIO' }));
