// LogTail while its message moves between state directories: the move's event brings the next look, never a timer, and a move during the log's open ends nothing.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Located, LogTail } from '../../src/web/log-tail.js';

let root: string;
const at = (state: string) => path.join(root, state, 'm');

beforeEach(async () => {
  root = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-log-tail-moves-'));
  for (const s of ['prep', 'que', 'run', 'done']) await fsp.mkdir(path.join(root, s));
});
afterEach(async () => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  await fsp.rm(root, { recursive: true, force: true });
});

/** A message dir in `state` with its log already written. */
async function message(state: string, log: string): Promise<void> {
  await fsp.mkdir(path.join(at(state), 'job'), { recursive: true });
  await fsp.writeFile(path.join(at(state), 'job', 'stdio.log'), log);
}

interface Tail {
  ended: Promise<Located | null>;
  isEnded: () => boolean;
  text: () => string;
  states: string[];
  /** Resolves once locate has been called `n` times in all. */
  asked: (n: number) => Promise<void>;
  calls: () => number;
  /** Resolves once the tail has said the message is in `state`. */
  stated: (state: string) => Promise<void>;
}

/** A tail on message `m` of `root` whose queue answers with `answer()` at the moment it is asked. */
function tail(answer: () => Located | null): Tail {
  let sent = '';
  let calls = 0;
  let ended = false;
  const waiters: { n: number; resolve: () => void }[] = [];
  const states: string[] = [];
  const stateWaiters: { state: string; resolve: () => void }[] = [];
  let end!: (loc: Located | null) => void;
  const endP = new Promise<Located | null>((r) => (end = r));
  const t = new LogTail({
    locate: async () => {
      const a = answer();
      calls++;
      for (const w of waiters.filter((x) => calls >= x.n)) w.resolve();
      return a;
    },
    stateDirs: ['prep', 'que', 'run'].map((s) => path.join(root, s)),
    msgId: 'm',
    file: 'stdio.log',
    offset: 0,
    send: async (text) => void (sent += text),
    state: (loc) => {
      states.push(loc.state);
      for (const w of stateWaiters.filter((x) => x.state === loc.state)) w.resolve();
    },
    end: (loc) => {
      ended = true;
      end(loc);
    },
    log: pino({ level: 'silent' }),
  });
  void t.start();
  const asked = (n: number) => (calls >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })));
  const stated = (state: string) => (states.includes(state) ? Promise.resolve() : new Promise<void>((resolve) => stateWaiters.push({ state, resolve })));
  return { ended: endP, isEnded: () => ended, text: () => sent, states, asked, calls: () => calls, stated };
}

/** The queue's answer from the disk as it is now (its memory follows each rename at once). */
function fromDisk(): Located | null {
  for (const s of ['prep', 'que', 'run', 'done']) if (fs.existsSync(at(s))) return { state: s, status: s, dir: at(s) };
  return null;
}

describe('LogTail while the message moves', () => {
  it("the message moves run → done between the log's open and its watch: the tail ends done with the whole log, not as gone", async () => {
    await message('run', 'one\ntwo\n');
    const watch = fs.watch;
    let moved = false;
    // The watch of the log is the one step after the open that names the file by path: the move lands just before it.
    vi.spyOn(fs, 'watch').mockImplementation(((file: fs.PathLike, ...rest: unknown[]) => {
      if (!moved && String(file).endsWith(path.join('job', 'stdio.log'))) {
        moved = true;
        fs.renameSync(at('run'), at('done'));
      }
      return (watch as (...a: unknown[]) => fs.FSWatcher)(file, ...rest);
    }) as typeof fs.watch);
    const t = tail(fromDisk);
    expect(await t.ended).toEqual({ state: 'done', status: 'done', dir: at('done') });
    expect(moved).toBe(true);
    expect(t.text()).toBe('one\ntwo\n');
    expect(t.states).toEqual(['run', 'done']);
  });

  it('a "not found" while the message is still in prep/ (a commit reading it) waits for its move with no timer, however long the commit takes', async () => {
    await message('prep', 'prep log\n');
    // setTimeout is the test's to run: a tail that timed its wait would hold a timer here.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let committing = true;
    const t = tail(() => (committing ? null : fromDisk()));
    await t.asked(1);
    // Let every timer the tail holds run out, as on a machine too loaded to finish the commit meanwhile.
    for (let i = 0; i < 50 && vi.getTimerCount() > 0 && !t.isEnded(); i++) {
      const next = t.asked(t.calls() + 1);
      await vi.advanceTimersToNextTimerAsync();
      await Promise.race([next, t.ended]);
    }
    expect(t.isEnded()).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    // The commit lands: its rename out of prep/ is the event that looks again.
    committing = false;
    fs.renameSync(at('prep'), at('que'));
    await t.asked(2);
    fs.renameSync(at('que'), at('run'));
    fs.renameSync(at('run'), at('done'));
    expect(await t.ended).toEqual({ state: 'done', status: 'done', dir: at('done') });
    expect(t.text()).toBe('prep log\n');
  });

  it("an answer older than the disk (the message moved on meanwhile) waits for the move's event with no timer", async () => {
    await message('que', 'log\n');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let stale = true;
    // The queue answered `que` and the dispatcher moved it to run/ before the tail looked at the disk.
    const t = tail(() => {
      if (!stale) return fromDisk();
      fs.renameSync(at('que'), at('run'));
      stale = false;
      return { state: 'que', status: 'que', dir: at('que') };
    });
    await t.stated('run');
    expect(t.states).toEqual(['run']);
    expect(vi.getTimerCount()).toBe(0);
    fs.renameSync(at('run'), at('done'));
    expect(await t.ended).toEqual({ state: 'done', status: 'done', dir: at('done') });
  });
});
