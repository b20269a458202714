// Group commit of directory fsyncs (DirSync) against fsyncs the test finishes by hand: who shares which fsync, and when each caller is answered.
import { beforeEach, describe, expect, it } from 'vitest';
import { DirSync } from '../../src/spool/durable.js';
import { type SpoolFile, type SpoolFs, nodeSpoolFs } from '../../src/spool/spool-fs.js';
import { type RecordingFs, recordingFs } from '../helpers/recording-fs.js';

/**
 * A SpoolFs whose fsyncs (open + sync, as DirSync does them) finish only when the test releases
 * them. Nothing touches a disk, so every other step settles within promise callbacks.
 */
function heldFsyncs(): { fs: SpoolFs; pending: { path: string; release(): void }[] } {
  const pending: { path: string; release(): void }[] = [];
  const unused = () => Promise.reject(new Error('not used by DirSync'));
  const file = (p: string): SpoolFile => ({
    sync: () => new Promise<void>((release) => void pending.push({ path: p, release })),
    close: () => Promise.resolve(),
    writeFile: unused,
    write: unused,
    truncate: unused,
    datasync: unused,
    stat: unused,
  });
  return { fs: { ...nodeSpoolFs, open: async (p) => file(p) }, pending };
}

/** Every promise callback has run once an immediate fires, so the fake's state can be read. */
const settle = () => new Promise<void>((r) => setImmediate(r));

describe('group commit (DirSync)', () => {
  let held: ReturnType<typeof heldFsyncs>;
  let rec: RecordingFs;
  let ds: DirSync;
  beforeEach(() => {
    held = heldFsyncs();
    rec = recordingFs('/q', held.fs);
    ds = new DirSync(rec.fs);
  });

  const call = (who: string, dir: string) => {
    rec.mark(`call ${who}`);
    void ds.sync(dir).then(() => rec.mark(`resolved ${who}`));
  };
  const release = async (dir: string) => {
    const i = held.pending.findIndex((p) => p.path === dir);
    expect(i, `an fsync of ${dir} is running`).toBeGreaterThanOrEqual(0);
    held.pending.splice(i, 1)[0].release();
    await settle();
  };
  const answered = () => rec.log.filter((l) => l.startsWith('resolved ')).map((l) => l.slice('resolved '.length));

  /** Each caller was answered after an fsync of `dir` that was issued after its call and had finished. */
  function expectEachCovered(dir: string, who: string[]): void {
    const log = rec.log;
    for (const w of who) {
      const called = log.indexOf(`call ${w}`);
      const answer = log.indexOf(`resolved ${w}`);
      const covered = log.some((l, i) => {
        const done = log.indexOf(`fsynced ${dir}`, i);
        return i > called && l === `fsync ${dir}` && done > i && done < answer;
      });
      expect(covered, `${w}: no fsync of ${dir} between its call and its answer in\n${log.join('\n')}`).toBe(true);
    }
  }

  it('callers arriving while an fsync runs share one follow-up fsync, issued after it ends; none is answered early', async () => {
    const d = '/q/que';
    call('a', d);
    await settle();
    expect(held.pending.map((p) => p.path)).toEqual([d]);
    // 50 callers while the first fsync runs: it began before they asked, so it may not cover them.
    const late = Array.from({ length: 50 }, (_, i) => `b${i}`);
    for (const w of late) call(w, d);
    await settle();
    expect(held.pending).toHaveLength(1);
    await release(d);
    expect(answered()).toEqual(['a']);
    expect(held.pending.map((p) => p.path)).toEqual([d]);
    // One more while the follow-up runs: that one needs a third.
    call('c', d);
    await settle();
    await release(d);
    expect(answered()).toEqual(['a', ...late]);
    await release(d);
    expect(answered()).toEqual(['a', ...late, 'c']);
    expect(held.pending).toEqual([]);
    // 52 callers, three fsyncs: the 50 concurrent ones cost one.
    expect(rec.only('fsync')).toEqual(['fsync que', 'fsync que', 'fsync que']);
    expectEachCovered('que', ['a', ...late, 'c']);
  });

  it('N callers at once cost at most two fsyncs, and each is answered by one issued after its call', async () => {
    const who = Array.from({ length: 20 }, (_, i) => `w${i}`);
    for (const w of who) call(w, '/q/que');
    await settle();
    // One at a time: a second fsync of a directory never runs beside the first.
    for (let i = 0; held.pending.length > 0 && i < who.length; i++) {
      expect(held.pending).toHaveLength(1);
      await release('/q/que');
    }
    expect(answered().sort()).toEqual([...who].sort());
    expect(rec.only('fsync').length).toBeLessThanOrEqual(2);
    expectEachCovered('que', who);
  });

  it('different directories are synced separately, at the same time', async () => {
    call('x', '/q/que');
    call('y', '/q/err');
    await settle();
    expect(held.pending.map((p) => p.path).sort()).toEqual(['/q/err', '/q/que']);
    await release('/q/err');
    expect(answered()).toEqual(['y']);
    await release('/q/que');
    expect(answered()).toEqual(['y', 'x']);
    expectEachCovered('que', ['x']);
    expectEachCovered('err', ['y']);
  });
});
