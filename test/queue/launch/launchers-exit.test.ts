// How the launchers report a script's end, the same from the child_process gate and the native spawner: exit code, signal and its name, exit 126/127, the whole group killed. Real processes.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LAUNCHERS, T, alive, launchSession, statFields, until } from './launcher-harness.js';

describe.each(LAUNCHERS)('%s launcher', (name, launch) => {
  const session = launchSession(name, launch);
  const { sh } = session;

  it(
    'reports the exit code',
    async () => {
      const s = sh('exit 7');
      expect(await s.exited).toEqual({ code: 7, signal: null });
    },
    T,
  );

  it(
    'reports death by a signal',
    async () => {
      const s = sh('kill -TERM $$');
      expect(await s.exited).toEqual({ code: null, signal: 'SIGTERM' });
    },
    T,
  );

  it.each([
    ['ABRT', 'SIGABRT'],
    ['IO', 'SIGIO'],
  ])(
    'names signal %s as Node does (%s)',
    async (sig, expected) => {
      const s = sh(`ulimit -c 0; kill -${sig} $$`);
      expect(await s.exited).toEqual({ code: null, signal: expected });
    },
    T,
  );

  it(
    'kills the whole process group, grandchildren included, with process.kill(-pid)',
    async () => {
      const s = sh('sleep 30 </dev/null >/dev/null 2>&1 3>&- 4>&- & echo $! >&3; wait');
      const grandchild = Number(await s.fd3.next());
      expect(grandchild).toBeGreaterThan(0);
      expect(alive(grandchild)).toBe(true);
      expect(Number(statFields(fs.readFileSync(`/proc/${grandchild}/stat`, 'utf8'))[5])).toBe(s.child.pid);
      process.kill(-s.child.pid, 'SIGKILL');
      expect(await s.exited).toEqual({ code: null, signal: 'SIGKILL' });
      expect(alive(s.child.pid)).toBe(false);
      // The grandchild is reparented and reaped by someone else: wait for that, bounded.
      expect(await until(() => !alive(grandchild))).toBe(true);
    },
    T,
  );

  it(
    'a script exiting 126 or 127 itself has exited, not failed to start',
    async () => {
      expect(await sh('exit 126').exited).toEqual({ code: 126, signal: null });
      expect(await sh('exit 127').exited).toEqual({ code: 127, signal: null });
    },
    T,
  );
});
