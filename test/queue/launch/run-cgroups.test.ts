// RunCgroups in this process: the spare run cgroup is made on the thread pool as a run starts, a start never waits for it, and a close waits for one in flight.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunCgroups } from '../../../src/queue/launch/run-cgroups.js';
import { ScriptEnv } from '../../../src/queue/launch/script-env.js';
import { POOL_SIZE, ThreadPoolGate } from '../../helpers/thread-pool-gate.js';
import { capturedLog } from '../../helpers/captured-log.js';
import { NO_CGROUPS, T, native } from './launcher-harness.js';

const { log, lines } = capturedLog('info');

describe.skipIf(NO_CGROUPS !== null)(`run cgroups made ahead${NO_CGROUPS ? ` (skipped: ${NO_CGROUPS})` : ''}`, () => {
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

  /** Starts `sh -c exit 0` through the run cgroups; resolves once it has exited, with its cgroup (read from its own /proc) and its end. */
  async function run(launch: ReturnType<RunCgroups['around']>, msgId: string) {
    const out = path.join(dir, `${msgId}.cgroup`);
    const logFd = fs.openSync(out, 'w');
    try {
      const child = launch({
        msgId,
        argv: ['/bin/sh', '-c', 'grep ^0:: /proc/self/cgroup'],
        env: ScriptEnv.of({}),
        cwd: dir,
        logFd,
        header: { time: '', script: msgId },
      });
      expect(await child.exited).toMatchObject({ code: 0 });
      child.fromScript.destroy();
      child.toScript.destroy();
      return { cgroup: path.basename(fs.readFileSync(out, 'utf8').trim()), end: () => child.endLeftovers!(log, 0) };
    } finally {
      fs.closeSync(logFd);
    }
  }

  it(
    'makes the next spare off the main thread as a run starts; a start meanwhile makes its own; a close waits for the spare in flight',
    async () => {
      await cgroups.start(native);
      const parent = String(lines.find((l) => l.msg.startsWith('each script runs in a cgroup of its own'))?.cgroup);
      const runs = () => fs.readdirSync(parent).filter((n) => /^run-\d+$/.test(n));
      const [spare] = runs();
      expect(runs()).toEqual([spare]);
      const launch = cgroups.around(native);
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
});
