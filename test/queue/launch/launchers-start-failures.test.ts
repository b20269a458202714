// Scripts the launchers cannot start, the same from the child_process gate and the native spawner: a missing argv[0] or cwd, an exec the kernel refuses, a spawnError each, nothing thrown or left running. Real processes.
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { LAUNCHERS, type Started, T, alive, launchSession, myChildren } from './launcher-harness.js';

describe.each(LAUNCHERS)('%s launcher', (name, launch) => {
  const session = launchSession(name, launch);
  const { start, sh } = session;
  let dir: string;
  beforeEach(() => (dir = session.dir));

  it(
    'reports an argv[0] that does not exist as a spawnError (ENOENT), without throwing',
    async () => {
      for (const argv0 of [path.join(dir, 'no-such-script'), 'rq-no-such-command-on-path']) {
        let s: Started | undefined;
        expect(() => (s = start([argv0, 'arg']))).not.toThrow();
        expect(await s!.exited, argv0).toEqual({ code: null, signal: null, spawnError: expect.stringMatching(/ENOENT/), spawnCode: 'ENOENT' });
      }
    },
    T,
  );

  it(
    'reports an exec the kernel refuses (the file still open for writing: ETXTBSY) with an errno name, without throwing',
    async () => {
      const file = path.join(dir, 'busy.sh');
      fs.writeFileSync(file, '#!/bin/sh\necho ran >&3\n', { mode: 0o755 });
      const writer = fs.openSync(file, 'r+');
      try {
        let s: Started | undefined;
        expect(() => (s = start([file]))).not.toThrow();
        const info = await s!.exited;
        // sh only says 126 (found, not executable): the gate cannot name the errno more closely.
        expect(info).toMatchObject(
          name === 'native'
            ? { spawnCode: 'ETXTBSY', spawnError: expect.stringMatching(/exec: Text file busy/) }
            : { spawnCode: 'EACCES', spawnError: expect.stringMatching(/could not exec/) },
        );
      } finally {
        fs.closeSync(writer);
      }
    },
    T,
  );

  it(
    'reports a NUL byte in an argument, an environment value or the cwd as a spawnError, without throwing or starting anything',
    async () => {
      const before = myChildren();
      const marker = path.join(dir, 'ran');
      for (const o of [{ argv: ['/bin/sh', '-c', `touch ${marker}`, 'a\0b'] }, { env: { ...process.env, RQ_BAD: 'a\0b' } }, { cwd: `${dir}\0x` }]) {
        let s: Started | undefined;
        expect(() => (s = start(o.argv ?? ['/bin/sh', '-c', `touch ${marker}`], o))).not.toThrow();
        expect(await s!.exited, JSON.stringify(o)).toMatchObject({ code: null, spawnError: 'an argument or environment value contains a NUL byte' });
      }
      expect(fs.existsSync(marker)).toBe(false);
      expect([...myChildren()].filter((pid) => !before.has(pid))).toEqual([]);
    },
    T,
  );

  it(
    'reports a cwd that does not exist as a spawnError and leaves nothing running',
    async () => {
      const before = myChildren();
      let s: Started | undefined;
      expect(() => (s = sh('echo ran >&3; sleep 30', { cwd: path.join(dir, 'missing') }))).not.toThrow();
      const info = await s!.exited;
      expect(typeof info.spawnError).toBe('string');
      expect(info.spawnError!.length).toBeGreaterThan(0);
      if (s!.child.pid > 0) expect(alive(s!.child.pid)).toBe(false);
      const leftover = [...myChildren()].filter((pid) => !before.has(pid));
      expect(leftover).toEqual([]);
    },
    T,
  );
});
