// RunCgroups in this process: a run cgroup made ahead on the thread pool as a run starts, a start never waiting for it, a close waiting for one in flight; a kill reaching all of a run's cgroup; a run's own kept for the next, out of a late kill's reach, but not one a signal ended, and one killed since refusing its start.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { members, populated } from '../../../src/queue/launch/cgroup-fs.js';
import { RunCgroups } from '../../../src/queue/launch/run-cgroups.js';
import { ScriptEnv } from '../../../src/queue/launch/script-env.js';
import { POOL_SIZE, ThreadPoolGate } from '../../helpers/thread-pool-gate.js';
import { waitFor } from '../../helpers/rq-root.js';
import { capturedLog } from '../../helpers/captured-log.js';
import { NO_CGROUPS, T, native } from './launcher-harness.js';

const { log, lines } = capturedLog('info');

describe.skipIf(NO_CGROUPS !== null)(`run cgroups made ahead and kept${NO_CGROUPS ? ` (skipped: ${NO_CGROUPS})` : ''}`, () => {
  let dir: string;
  let cgroups: RunCgroups;
  let gate: ThreadPoolGate;
  let closed: Promise<void> | null;
  const close = () => (closed ??= cgroups.close());
  beforeEach(() => {
    closed = null;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rq-run-cgroups-'));
    cgroups = new RunCgroups({ name: `spare-${process.pid}`, queueDir: dir, log, env: {} });
    gate = new ThreadPoolGate(dir);
  });
  afterEach(async () => {
    await gate.releaseAll();
    await close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the run cgroups on the native launcher: their parent, as the start logged it, and the launcher they wrap. */
  async function begin() {
    await cgroups.start(native);
    const parent = String([...lines].reverse().find((l) => l.msg.startsWith('each script runs in a cgroup of its own'))?.cgroup);
    return { parent, launch: cgroups.around(native) };
  }

  /** Starts `script` (after it says which cgroup it is in) through the run cgroups: the child, and the cgroup's name once it has said it. */
  function start(launch: ReturnType<RunCgroups['around']>, msgId: string, script = 'exit 0') {
    const out = path.join(dir, `${msgId}.log`);
    const logFd = fs.openSync(out, 'w');
    try {
      const argv = ['/bin/sh', '-c', `grep ^0:: /proc/self/cgroup; ${script}`];
      const child = launch({ msgId, argv, env: ScriptEnv.of({}), cwd: dir, logFd, header: { time: '', script: msgId } });
      const said = () => /^0::.*\/(run-\d+)$/m.exec(fs.readFileSync(out, 'utf8'))?.[1];
      return { child, cgroup: async () => (await waitFor(said, `${msgId} to say its cgroup`))! };
    } finally {
      fs.closeSync(logFd);
    }
  }

  /** start() for a script that exits at once: its cgroup, and its end (what the queue calls once it has exited). */
  async function run(launch: ReturnType<RunCgroups['around']>, msgId: string) {
    const { child, cgroup } = start(launch, msgId);
    const exit = await child.exited;
    expect(exit).toMatchObject({ code: 0 });
    return { cgroup: await cgroup(), end: () => child.endLeftovers!(log, 0, exit) };
  }

  it(
    'makes the next spare off the main thread as a run starts; a start meanwhile makes its own; a close waits for the spare in flight',
    async () => {
      const { parent, launch } = await begin();
      const runs = () => fs.readdirSync(parent).filter((n) => /^run-\d+$/.test(n));
      const [spare] = runs();
      expect(runs()).toEqual([spare]);
      // Every pool thread held: a spare made on the main thread would be there at once.
      for (let i = 0; i < POOL_SIZE; i++) gate.hold();
      await gate.held(POOL_SIZE);
      const first = await run(launch, 'first');
      expect(first.cgroup).toBe(spare);
      expect(runs()).toEqual([spare]);
      const second = await run(launch, 'second');
      expect(second.cgroup).not.toBe(spare);
      expect(runs().sort()).toEqual([spare, second.cgroup].sort());
      first.end();
      second.end();
      const closing = close();
      await gate.releaseAll();
      await closing;
      expect(fs.existsSync(parent)).toBe(false);
    },
    T,
  );

  it(
    'keeps the cgroup of a run that ended leaving nothing for the next, and a late kill of the first then signals only its own group',
    async () => {
      const { launch } = await begin();
      const first = start(launch, 'first');
      const exit = await first.child.exited;
      expect(exit).toMatchObject({ code: 0 });
      first.child.endLeftovers!(log, 0, exit);
      const second = start(launch, 'second', 'exec sleep 30');
      expect(await second.cgroup()).toBe(await first.cgroup());
      // A kill that reached the cgroup would end the second run with SIGKILL before its own TERM.
      first.child.kill('SIGKILL');
      second.child.kill('SIGTERM');
      expect(await second.child.exited).toMatchObject({ signal: 'SIGTERM' });
    },
    T,
  );

  it(
    "a kill during a run reaches every process in its cgroup, one in a session of its own too, not only the script's group",
    async () => {
      const { parent, launch } = await begin();
      const running = start(launch, 'running', 'setsid sleep 30 & wait');
      const cgroup = path.join(parent, await running.cgroup());
      await waitFor(() => members(cgroup).length === 2, 'the script and its setsid sleep in the cgroup');
      running.child.kill('SIGKILL');
      const exit = await running.child.exited;
      expect(exit).toMatchObject({ signal: 'SIGKILL' });
      await waitFor(() => !populated(cgroup), 'the sleep to be killed with the script', 5000);
      running.child.endLeftovers!(log, 0, exit);
    },
    T,
  );

  it(
    'does not keep the cgroup of a run a signal ended: one its script killed through cgroup.kill would kill the next run at its birth',
    async () => {
      const { parent, launch } = await begin();
      const first = start(launch, 'first', `echo 1 > "${parent}/$(sed -n 's|^0::.*/||p' /proc/self/cgroup)/cgroup.kill"; sleep 30`);
      const exit = await first.child.exited;
      expect(exit).toMatchObject({ signal: 'SIGKILL' });
      first.child.endLeftovers!(log, 0, exit);
      const second = await run(launch, 'second');
      expect(second.cgroup).not.toBe(await first.cgroup());
      second.end();
    },
    T,
  );

  it(
    'refuses a start into a kept cgroup killed since (cgroup.kill) as a resource, with nothing of the script run, and removes it; the next start has another',
    async () => {
      const { parent, launch } = await begin();
      const first = await run(launch, 'first');
      first.end();
      const kept = path.join(parent, first.cgroup);
      // As a process the first run left could have, just before it was looked for, or an operator.
      fs.writeFileSync(path.join(kept, 'cgroup.kill'), '1');
      const second = start(launch, 'second', 'echo ran > ran');
      expect(await second.child.exited).toMatchObject({ spawnCode: 'EAGAIN', spawnError: expect.stringMatching(/killed before it ran/) });
      expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false);
      await waitFor(() => !fs.existsSync(kept), 'the killed cgroup to be removed');
      const third = await run(launch, 'third');
      expect(third.cgroup).not.toBe(first.cgroup);
      third.end();
    },
    T,
  );
});
