// Starts that did not happen: each way a start fails returns the message to que untouched, holds dispatch, and retries without a busy loop.
import fs from 'node:fs/promises';
import { statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { streamFromScript } from '../../../src/queue/launch/from-script.js';
import { failedLaunch } from '../../../src/queue/launch/script-runner.js';
import { EPISODE_GAP_MS, RETRY_MS, StartGuard, VANISHED_WITHIN_MS, refusalOf, vanishedStart } from '../../../src/queue/rules/start-refusal.js';
import { type InProcess, inProcessQueue } from '../in-process.js';
import { capturedLog } from '../../helpers/captured-log.js';

let q: InProcess | null = null;
afterEach(async () => {
  vi.useRealTimers();
  await q?.close();
  q = null;
});

describe('refusalOf', () => {
  it.each(['EACCES', 'ENOENT', 'ENOEXEC', 'ETXTBSY', 'ENOTDIR', 'ELOOP'])('%s is the script’s: SCRIPTERROR', (code) => {
    expect(refusalOf(code, 't')).toEqual({ kind: 'script', code, text: 't' });
  });
  it.each(['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM'])('%s is a resource: back off', (code) => {
    expect(refusalOf(code, 't')).toEqual({ kind: 'resource', code, text: 't' });
  });
  it.each([undefined, 'RQ_ERR_SPAWN', 'EIO'])('%s is no refusal: the run fails as before', (code) => {
    expect(refusalOf(code, 't')).toBeNull();
  });
});

describe('vanishedStart: an interpreter that could not open a script a deploy moved as it started', () => {
  // Each case: how the run ended, whether it wrote on fd 3, what happened to the script file meanwhile.
  type Fate = 'same' | 'gone' | 'replaced';
  const cases: Array<[string, { code: number | null; signal: string | null }, boolean, Fate, boolean, number?]> = [
    ['dash could not open it (2), file gone', { code: 2, signal: null }, false, 'gone', true],
    ['exit 2 a moment before the bound, file gone', { code: 2, signal: null }, false, 'gone', true, VANISHED_WITHIN_MS - 1],
    ['exit 2 at the bound, file gone: the script ran (a deploy during a real run)', { code: 2, signal: null }, false, 'gone', false, VANISHED_WITHIN_MS],
    ['bash could not find it (127), file gone', { code: 127, signal: null }, false, 'gone', true],
    ['bash could not exec it (126), file replaced', { code: 126, signal: null }, false, 'replaced', true],
    ['exit 2, file replaced by a new inode', { code: 2, signal: null }, false, 'replaced', true],
    ['exit 2, the same file still there: the script failed by itself', { code: 2, signal: null }, false, 'same', false],
    ['exit 127, the same file still there', { code: 127, signal: null }, false, 'same', false],
    ['exit 2 after a line on fd 3: it ran', { code: 2, signal: null }, true, 'gone', false],
    ['exit 1, file gone: not an interpreter’s code', { code: 1, signal: null }, false, 'gone', false],
    ['exit 0, file gone', { code: 0, signal: null }, false, 'gone', false],
    ['killed by a signal, file gone', { code: null, signal: 'SIGKILL' }, false, 'gone', false],
  ];
  it.each(cases)('%s', async (_name, exit, said, fate, refused, ranMs = 5) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-vanished-'));
    try {
      const file = path.join(dir, 'run');
      await fs.writeFile(file, '#!/bin/sh\n', { mode: 0o755 });
      const st = statSync(file);
      if (fate === 'gone') await fs.rename(file, `${file}.away`);
      if (fate === 'replaced') {
        // A copy renamed over it: same path, new inode (made before the unlink, so the inode number cannot be reused).
        await fs.copyFile(file, `${file}.new`);
        await fs.rename(`${file}.new`, file);
      }
      const r = vanishedStart(exit, { saidAnything: said, ranMs }, { path: file, dev: st.dev, ino: st.ino });
      if (!refused) return expect(r).toBeNull();
      expect(r).toEqual({
        kind: 'script',
        code: 'ENOENT',
        text: `script ${file} was ${fate === 'gone' ? 'renamed away or deleted' : 'replaced'} as it started (exit ${exit.code} before any line on fd 3)`,
      });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

/** A guard over a fake admin, with the warnings it logs and the pumps it asks for. */
function guard(retryMs = { base: 100, cap: 400 }) {
  const { log, lines } = capturedLog();
  const admin = {
    status: 'UP',
    reason: '',
    rechecks: 0,
    scriptFailed: (r: string) => ((admin.status = 'SCRIPTERROR'), (admin.reason = r)),
    recheckScript: () => void admin.rechecks++,
  };
  let clock = 0;
  const pumps: number[] = [];
  const g = new StartGuard({ admin, log, pump: () => pumps.push(clock), running: () => 0, retryMs, now: () => clock });
  return { g, admin, pumps, lines, tick: (ms: number) => ((clock += ms), vi.advanceTimersByTime(ms)) };
}

describe('StartGuard', () => {
  it('a resource refusal holds dispatch until the retry, whose delay doubles per refusal in a row up to the cap and resets on a start', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { g, pumps, tick } = guard();
    const emfile = refusalOf('EMFILE', 'out of fds')!;
    g.refused(emfile);
    expect(g.canStart()).toBe(false);
    tick(99);
    expect(pumps).toEqual([]);
    tick(1);
    expect(pumps).toEqual([100]);
    expect(g.canStart()).toBe(true);
    const delays = [];
    for (let i = 0; i < 4; i++) {
      g.refused(emfile);
      const before = pumps.length;
      let waited = 0;
      for (; pumps.length === before; waited++) tick(1);
      delays.push(waited);
    }
    expect(delays).toEqual([200, 400, 400, 400]);
    g.started();
    g.refused(emfile);
    tick(100);
    expect(pumps).toHaveLength(6);
  });

  it('a start spends a credit of the last fd probe; once they are spent the next probe runs after the start, not on the next one', () => {
    vi.useFakeTimers({ toFake: ['setImmediate'] });
    let probes = 0;
    const g = new StartGuard({
      admin: { status: 'UP', scriptFailed: () => undefined, recheckScript: () => undefined },
      log: pino({ level: 'silent' }),
      pump: () => undefined,
      running: () => (probes++, 0),
    });
    const start = () => {
      expect(g.headroom()).toBeNull();
      g.started();
    };
    start();
    expect(probes).toBe(1);
    for (let i = 1; i < 16; i++) start();
    expect(probes).toBe(1);
    // The credit is spent: the probe waits for the event loop's next turn, then vouches for 16 more.
    vi.runAllTimers();
    expect(probes).toBe(2);
    for (let i = 0; i < 16; i++) start();
    expect(probes).toBe(2);
    g.close();
    vi.runAllTimers();
    expect(probes).toBe(2);
    expect(g.headroom()).toBeNull();
    expect(probes).toBe(3);
  });

  it('a script exiting lifts a resource hold at once; one timer at a time, none after close', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { g, tick, pumps } = guard();
    g.refused(refusalOf('EAGAIN', 'fork')!);
    g.refused(refusalOf('EMFILE', 'pipe')!);
    expect(vi.getTimerCount()).toBe(1);
    g.ended();
    expect(g.canStart()).toBe(true);
    g.close();
    expect(vi.getTimerCount()).toBe(0);
    g.refused(refusalOf('EMFILE', 'pipe')!);
    tick(10_000);
    expect(pumps).toEqual([]);
  });

  it('warns once per episode of resource refusals, not once per message; a gap starts a new episode', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { g, lines, tick } = guard();
    for (let i = 0; i < 50; i++) {
      g.refused(refusalOf('EMFILE', 'out of fds')!);
      g.started();
      tick(1000);
    }
    const warned = () => lines.filter((l) => l.level === 40);
    expect(warned()).toHaveLength(1);
    tick(EPISODE_GAP_MS + 1);
    g.refused(refusalOf('ENFILE', 'system out of fds')!);
    expect(warned()).toHaveLength(2);
  });

  it('a script refusal sets SCRIPTERROR and re-checks the script on the timer until it is usable (a symlink swap the watch misses)', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { g, admin, tick } = guard();
    g.refused(refusalOf('EACCES', 'rq-spawn: exec: Permission denied')!);
    expect(admin).toMatchObject({ status: 'SCRIPTERROR', reason: 'rq-spawn: exec: Permission denied' });
    // SCRIPTERROR is the admin's to hold; the guard's own hold is for resources.
    expect(g.canStart()).toBe(true);
    tick(100);
    tick(200);
    tick(400);
    expect(admin.rechecks).toBe(3);
    admin.status = 'UP';
    tick(400);
    expect(admin.rechecks).toBe(4);
    tick(10_000);
    expect(admin.rechecks).toBe(4);
  });

  it('defaults to a first retry within a few seconds and a cap that keeps it that way', () => {
    expect(RETRY_MS.base).toBeGreaterThanOrEqual(1000);
    expect(RETRY_MS.cap).toBeLessThanOrEqual(10_000);
  });
});

/** The que → run and run → que lines of a refused start. */
async function refusedLines(id: string) {
  return (await q!.queue.spool.readHistory('que', id))
    .filter((h) => h.from !== null)
    .map((h) => ({ from: h.from, to: h.to, reason: h.reason, attempt: h.attempt }));
}

describe('a refused start in the queue', () => {
  it('exec refused (EACCES inside the spawn): message back in que untouched, SCRIPTERROR; a status request finding the script usable resumes', async () => {
    q = await inProcessQueue();
    q.launcher.failures.push(() => failedLaunch('rq-spawn: exec: Permission denied', 'EACCES'));
    const held = q.next('status', (s) => s.status === 'SCRIPTERROR');
    const back = q.next('moved', (m) => m.to === 'que' && m.from === 'run');
    const m = await q.send();
    await held;
    await back;
    expect(await q.state(m.msg_id)).toBe('que');
    expect(await refusedLines(m.msg_id)).toEqual([
      { from: 'que', to: 'run', reason: undefined, attempt: 1 },
      { from: 'run', to: 'que', reason: 'could not start script: rq-spawn: exec: Permission denied', attempt: undefined },
    ]);
    expect((await q.cmd('get_message', { msg_id: m.msg_id }))[1]).not.toHaveProperty('failures');
    expect(q.queue.counts().err).toBe(0);
    expect(q.queue.status()).toBe('UP');
    const s = await q.launcher.nth(0);
    expect(s.env.RQ_MSG_ID).toBe(m.msg_id);
  });

  it('SCRIPTERROR from a refused exec clears on the retry timer with no status request', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    q = await inProcessQueue();
    q.launcher.failures.push(() => failedLaunch('rq-spawn: exec: Text file busy', 'ETXTBSY'));
    const held = q.next('status', (s) => s.status === 'SCRIPTERROR');
    const m = await q.send();
    await held;
    const up = q.next('status', (s) => s.status === 'UP');
    vi.advanceTimersByTime(RETRY_MS.base);
    await up;
    expect((await q.launcher.nth(0)).env.RQ_MSG_ID).toBe(m.msg_id);
  });

  it('out of fds (EMFILE from a pipe or stdio.log): back in que, status UP, no other start until a script exits', async () => {
    q = await inProcessQueue({ num_workers: 3 });
    const first = await q.send();
    const s0 = await q.launcher.nth(0);
    expect(s0.env.RQ_MSG_ID).toBe(first.msg_id);
    q.launcher.failures.push(() => {
      throw Object.assign(new Error("EMFILE: too many open files, open 'stdio.log'"), { code: 'EMFILE' });
    });
    const back = q.next('moved', (m) => m.to === 'que' && m.from === 'run');
    const m = await q.send();
    await back;
    expect(await q.state(m.msg_id)).toBe('que');
    expect(q.queue.status()).toBe('UP');
    // Held: a third message waits too, though a worker is free.
    const other = await q.send();
    expect(q.launcher.started).toHaveLength(1);
    s0.say('done');
    s0.exit(0);
    const [a, b] = await Promise.all([q.launcher.nth(1), q.launcher.nth(2)]);
    expect([a.env.RQ_MSG_ID, b.env.RQ_MSG_ID].sort()).toEqual([m.msg_id, other.msg_id].sort());
  });

  it('a failure that is not a refusal (a NUL byte in the environment) still ends in err, saying why', async () => {
    q = await inProcessQueue();
    q.launcher.failures.push(() => failedLaunch('an argument or environment value contains a NUL byte'));
    const end = q.next('finished');
    const m = await q.send();
    expect((await end).outcome.state).toBe('err');
    expect(await q.state(m.msg_id)).toBe('err');
    expect(q.queue.status()).toBe('UP');
  });

  it('an exec sh could not do, reported once sh exited (the gate): back in que, SCRIPTERROR, no pid file left', async () => {
    q = await inProcessQueue();
    q.launcher.failures.push(() => {
      const ended = new PassThrough();
      ended.end();
      return {
        pid: 4_100_000,
        fromScript: streamFromScript(ended),
        toScript: new PassThrough(),
        kill: () => undefined,
        exited: Promise.resolve({ code: 126, signal: null, spawnError: 'sh could not exec /x (exit 126)', spawnCode: 'EACCES' }),
      };
    });
    const held = q.next('status', (s) => s.status === 'SCRIPTERROR');
    const back = q.next('moved', (m) => m.to === 'que' && m.from === 'run');
    const m = await q.send();
    await held;
    await back;
    expect(await q.state(m.msg_id)).toBe('que');
    expect(await fs.readdir(q.queue.spool.msgDir('que', m.msg_id))).not.toContain('pid');
    expect(q.queue.counts().err).toBe(0);
  });
});
