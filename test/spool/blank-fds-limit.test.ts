// A queue keeps its blanks' msg files open only where it may hold 1,024 descriptors or more: below that, its scripts' pipes need them.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFilesUnder } from '../helpers/open-files.js';
import { perTestRoot } from '../helpers/per-test-root.js';
import { fdLimitWrap } from '../helpers/prlimit.js';
import { QueueProc, addQueue, waitFor } from '../helpers/rq-root.js';

const ctx = perTestRoot();

/** The queue's full blank pool (its first create starts the refill): the blanks, and how many of their files the queue holds open. */
async function fullPool(nofile: number): Promise<{ blanks: number; open: number }> {
  await addQueue(ctx.t.root, 'lim', {});
  const q = (ctx.q = await QueueProc.start(ctx.t.root, 'lim', { wrap: fdLimitWrap(nofile) }));
  expect(await fs.readFile(`/proc/${q.pid}/limits`, 'utf8')).toMatch(new RegExp(`Max open files\\s+${nofile}\\s`));
  await q.send({});
  const dir = path.join(q.paths.dir, '.blank');
  // Full once 16 blanks each hold their last file: the refill has then made (and closed or kept) every descriptor it will.
  const blanks = await waitFor(async () => {
    const names = await fs.readdir(dir);
    const whole = await Promise.all(
      names.map((n) =>
        fs.access(path.join(dir, n, 'job', 'stdio.log')).then(
          () => true,
          () => false,
        ),
      ),
    );
    return names.length >= 16 && whole.every(Boolean) ? names.length : null;
  }, 'a full blank pool');
  return { blanks, open: openFilesUnder(dir, q.pid).length };
}

describe('blank msg descriptors and the fd limit', () => {
  it('at 1,024 open files the queue keeps each blank msg open', async () => {
    const { blanks, open } = await fullPool(1024);
    expect(open).toBe(blanks);
  });

  it('at 1,023 it keeps none open', async () => {
    const { open } = await fullPool(1023);
    expect(open).toBe(0);
  });
});
