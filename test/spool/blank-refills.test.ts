// When the pool of blanks refills: to its whole size however many trips that takes, once per take on a disk that makes
// none (never in a loop of its own), and again after its directory was removed behind the queue's back.
import fs from 'node:fs/promises';
import { closeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { type Blank, BlankDirs } from '../../src/spool/blanks.js';
import { type SpoolFs, nodeSpoolFs } from '../../src/spool/spool-fs.js';

let root: string;
let pool: BlankDirs | undefined;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-blank-refills-'));
});
afterEach(async () => {
  await pool?.close();
  pool = undefined;
  await fs.rm(root, { recursive: true, force: true });
});

const blanks = () => path.join(root, '.blank');
/** How many blanks the pool's directory holds (none while it is missing). */
const blankCount = async () => (await fs.readdir(blanks()).catch(() => [])).length;
const turn = () => new Promise((r) => setImmediate(r));
const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, mkdir'), { code: 'ENOSPC' });

/** A taken blank's dir, its msg descriptor (if the addon made it) closed. */
function dirOf(b: Blank | undefined): string | null {
  if (b?.made) closeSync(b.made.fd);
  return b?.dir ?? null;
}

/**
 * The real fs whose calls that make blanks are counted (the addon's batches, or each mkdir without it); once `full`,
 * those calls make nothing, a turn of the event loop later. `failed()` resolves when the next of them has failed, and
 * `made` counts the blanks finished: whatever the pool does next runs in the microtasks right after, before the
 * test's next turn (a blank's dir is listed before that, while its files are still being made).
 */
function disk(addon: boolean) {
  let onFail: () => void = () => undefined;
  const refuse = async () => {
    await turn();
    onFail();
  };
  const d = {
    calls: 0,
    /** The addon's calls that have answered. */
    answered: 0,
    made: 0,
    full: false,
    hold: null as Promise<void> | null,
    failed: () => new Promise<void>((resolve) => (onFail = resolve)),
    fs: {
      ...nodeSpoolFs,
      makeBlanks: addon
        ? async (...a: Parameters<NonNullable<SpoolFs['makeBlanks']>>) => {
            d.calls++;
            if (d.hold) await d.hold;
            try {
              if (!d.full) {
                const made = await nodeSpoolFs.makeBlanks!(...a);
                d.made += made.length;
                return made;
              }
              await refuse();
              return [];
            } finally {
              d.answered++;
            }
          }
        : undefined,
      mkdir: async (p: string, o: { recursive: boolean }) => {
        if (addon) return nodeSpoolFs.mkdir(p, o);
        d.calls++;
        if (d.hold) await d.hold;
        if (!d.full) return nodeSpoolFs.mkdir(p, o);
        await refuse();
        throw enospc();
      },
      // Without the addon a blank is finished when its last file, job/stdio.log, is closed.
      open: async (...a: Parameters<SpoolFs['open']>) => {
        const h = await nodeSpoolFs.open(...a);
        if (addon || !String(a[0]).endsWith(path.join('job', 'stdio.log'))) return h;
        const close = h.close.bind(h);
        return Object.assign(h, { close: () => close().then(() => void d.made++) });
      },
    } as SpoolFs,
  };
  return d;
}

describe('BlankDirs refills', () => {
  it('a pool larger than one trip of the addon (8 blanks) still fills to its size', async () => {
    pool = new BlankDirs(blanks(), 20, nodeSpoolFs);
    expect(pool.take()).toBeUndefined();
    await waitFor(async () => (await blankCount()) === 20, '20 blanks');
  });

  it.each([
    ['in batches through the addon', true],
    ['call by call without it', false],
  ])('%s: on a disk that makes no blank, each take tries once; the pool never retries by itself', async (_, addon) => {
    const d = disk(addon);
    d.full = true;
    pool = new BlankDirs(blanks(), 2, d.fs);
    for (let take = 1; take <= 3; take++) {
      const failed = d.failed();
      expect(pool.take()).toBeUndefined();
      await failed;
      await turn();
      expect(d.calls, `tries after take ${take}`).toBe(take);
    }
    // Space back: the next take fills the pool.
    d.full = false;
    pool.take();
    await waitFor(async () => (await blankCount()) === 2, 'two blanks');
  });

  it.each([
    ['in batches through the addon', true],
    ['call by call without it', false],
  ])('%s: a take during a refill that succeeded is answered once; a later refill that fails is not tried again by itself', async (_, addon) => {
    const d = disk(addon);
    let release!: () => void;
    d.hold = new Promise<void>((resolve) => (release = resolve));
    pool = new BlankDirs(blanks(), 2, d.fs);
    expect(pool.take()).toBeUndefined();
    await waitFor(() => d.calls === 1, 'the first refill');
    // Taken while that refill is held: it owes this take a refill once it ends, and only one.
    expect(pool.take()).toBeUndefined();
    d.hold = null;
    release();
    await waitFor(() => d.made === 2, 'two blanks');
    await turn();
    const before = d.calls;
    d.full = true;
    const failed = d.failed();
    expect(dirOf(pool.take())).not.toBeNull();
    await failed;
    await turn();
    expect(d.calls - before).toBe(1);
  });

  /** A full pool of two addon-made blanks whose directory is then removed behind its back. */
  async function poolLosingItsDir(): Promise<{ d: ReturnType<typeof disk>; p: BlankDirs }> {
    const d = disk(true);
    const p = (pool = new BlankDirs(blanks(), 2, d.fs));
    expect(p.take()).toBeUndefined();
    await waitFor(() => d.made === 2, 'two blanks');
    await turn();
    await fs.rm(blanks(), { recursive: true, force: true });
    return { d, p };
  }

  it("its directory removed behind the queue's back: made again by the next refill, and the pool fills again", async () => {
    const { d, p } = await poolLosingItsDir();
    // The pool's two blanks are gone with it: the refill after a first take finds no directory to make them in...
    expect(dirOf(p.take())).not.toBeNull();
    await waitFor(() => d.answered === 2, 'the refill that found no directory');
    await turn();
    // ...and the one after the next take makes it again.
    expect(dirOf(p.take())).not.toBeNull();
    await waitFor(async () => (await blankCount()) === 2, 'two blanks in a new .blank');
  });

  it('a take during a refill that finds its directory gone gets a refill of its own, which makes it again', async () => {
    const { p } = await poolLosingItsDir();
    // Both taken in one turn: the second comes while the first's refill runs, and that refill makes nothing.
    expect(dirOf(p.take())).not.toBeNull();
    expect(dirOf(p.take())).not.toBeNull();
    await waitFor(async () => (await blankCount()) === 2, 'two blanks in a new .blank, with no take after');
  });
});
