// Launchers starting scripts in a cgroup v2 (skipped where this process has none): the script and what it forks stay there, a cgroup it cannot enter is a spawnError. Real processes.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { killAll, removeCgroup } from '../../../src/queue/launch/cgroup-fs.js';
import { HOME, LAUNCHERS, NO_CGROUPS, OWN_CGROUP, T, launchSession } from './launcher-harness.js';

describe.each(LAUNCHERS)('%s launcher', (name, launch) => {
  const session = launchSession(name, launch);
  const { sh, headerOf } = session;
  let dir: string;
  beforeEach(() => (dir = session.dir));

  describe.skipIf(NO_CGROUPS !== null)(`with a cgroup${NO_CGROUPS ? ` (skipped: ${NO_CGROUPS})` : ''}`, () => {
    const cgroupName = `rq-launch-test-${process.pid}-${name}`;
    const cgroup = HOME.ok ? path.join(HOME.dir, cgroupName) : '';

    beforeEach(() => fs.mkdirSync(cgroup));
    afterEach(async () => {
      killAll(cgroup);
      await removeCgroup(cgroup, T);
    });

    it(
      'starts the script in r.cgroup, where what it forks stays even in a session of its own',
      async () => {
        const s = sh('grep ^0:: /proc/self/cgroup >&3; setsid sh -c "grep ^0:: /proc/self/cgroup" >&3', { cgroup });
        const text = await s.fd3.ended;
        expect(await s.exited).toEqual({ code: 0, signal: null });
        const want = `0::${path.posix.join(OWN_CGROUP, cgroupName)}`;
        expect(text).toBe(`${want}\n${want}\n`);
        expect(s.log()).toBe(headerOf(s.child.pid));
      },
      T,
    );

    it(
      'reports a cgroup it cannot start the script in as a spawnError, the script never run',
      async () => {
        const s = sh('echo ran >&3', { cgroup: path.join(cgroup, 'missing') });
        expect(await s.exited).toMatchObject({ spawnCode: 'ENOENT', spawnError: expect.stringMatching(/cgroup/) });
        expect(await s.fd3.ended).toBe('');
      },
      T,
    );

    it(
      "reports a failure of the child's setup in the cgroup as without one (the native child runs on a stack of its own there)",
      async () => {
        const s = sh('echo ran >&3', { cgroup, cwd: path.join(dir, 'missing') });
        const info = await s.exited;
        expect(info).toMatchObject({ spawnCode: 'ENOENT', spawnError: name === 'native' ? 'rq-spawn: chdir: No such file or directory' : expect.any(String) });
        expect(await s.fd3.ended).toBe('');
      },
      T,
    );
  });
});
