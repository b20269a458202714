// How the launchers start a script, the same from the child_process gate and the native spawner: nice 19, own session and group, cwd, exact environment, default signal dispositions, argv[0] through PATH. Real processes.
import fs from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { LAUNCHERS, T, launchSession, statFields } from './launcher-harness.js';
import { ScriptEnv, SharedEnv } from '../../../src/queue/launch/script-env.js';

describe.each(LAUNCHERS)('%s launcher', (name, launch) => {
  const session = launchSession(name, launch);
  const { testSecret, baseEnv, start, sh, headerOf } = session;
  let dir: string;
  beforeEach(() => (dir = session.dir));

  /** The environment a script was exec'd with (its /proc/<pid>/environ); PWD, which the gate's /bin/sh exports, only when it is the real cwd. */
  const execEnv = (environ: string): Record<string, string> => {
    const got = Object.fromEntries(
      environ
        .split('\0')
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
    );
    if (name === 'gate' && got.PWD === dir) delete got.PWD;
    return got;
  };

  it(
    'runs the script at nice 19 from its first instruction, in its own session and process group',
    async () => {
      // cat is the script itself (no shell in between): its own stat is what it started with.
      const s = start(['/bin/cat', '/proc/self/stat']);
      expect(await s.exited).toEqual({ code: 0, signal: null });
      const log = s.log();
      const header = headerOf(s.child.pid);
      expect(log.startsWith(header)).toBe(true);
      const f = statFields(log.slice(header.length).trim());
      expect(Number(f[1])).toBe(s.child.pid);
      expect(f[19]).toBe('19');
      expect(Number(f[5])).toBe(s.child.pid); // pgrp
      expect(Number(f[6])).toBe(s.child.pid); // session
    },
    T,
  );

  it(
    'runs the script in r.cwd',
    async () => {
      const cwd = path.join(dir, 'job dir');
      fs.mkdirSync(cwd);
      const s = sh('pwd -P >&3', { cwd });
      expect(await s.fd3.next()).toBe(fs.realpathSync(cwd));
      expect(await s.exited).toEqual({ code: 0, signal: null });
    },
    T,
  );

  it(
    'gives the script exactly the environment passed, not the daemon environment',
    async () => {
      expect(process.env[testSecret]).toBe('leaked');
      const env = { ...baseEnv(), EMPTY_VAR: '', UNDEFINED_VAR: undefined, MULTI: 'a=b c' };
      const s = sh('echo "$RQ_TEST_VAR|${RQ_LAUNCHER_TEST_NOT_PASSED-unset}" >&3; cat /proc/$$/environ >&3', { env });
      const text = await s.fd3.ended;
      expect(await s.exited).toEqual({ code: 0, signal: null });
      const [first, environ] = [text.slice(0, text.indexOf('\n')), text.slice(text.indexOf('\n') + 1)];
      expect(first).toBe('hello world|unset');
      expect(execEnv(environ)).toEqual(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)));
    },
    T,
  );

  it(
    "gives a run's own variables and the shared ones, each name once, the run's value replacing a shared one; run after run",
    async () => {
      const shared = new SharedEnv({ ...baseEnv(), SHARED_ONLY: 's', BOTH: 'shared' });
      const owns: Record<string, string>[] = [{ OWN: 'first' }, { OWN: 'second', BOTH: 'own' }, { OWN: 'third' }];
      for (const own of owns) {
        const env = new ScriptEnv(shared, own);
        const s = sh('cat /proc/$$/environ >&3', { env });
        const environ = await s.fd3.ended;
        expect(await s.exited).toEqual({ code: 0, signal: null });
        expect(execEnv(environ)).toEqual({ ...shared.vars, ...own });
        expect(environ.split('\0').filter((kv) => kv.startsWith('BOTH='))).toHaveLength(1);
        // The native spawner puts the shared part, converted once, first and the run's own after it.
        const { shared: first, own: after } = env.parts();
        if (name === 'native') expect(environ.split('\0').filter(Boolean)).toEqual(first ? first.entries.concat(after) : after);
      }
    },
    T,
  );

  it(
    'starts the script with default signal dispositions (SIGPIPE not ignored) and no signal blocked',
    async () => {
      // Node itself ignores SIGPIPE and SIGXFSZ: this fails if a launcher does not reset them.
      expect(fs.readFileSync('/proc/self/status', 'utf8')).toMatch(/^SigIgn:\s*0*[1-9a-f][0-9a-f]*$/m);
      // grep is the script itself: a shell reading its own /proc/$$/status through a child would
      // race with dash, which blocks all signals around its own forks.
      const s = start(['grep', '-E', '^Sig(Ign|Blk):', '/proc/self/status']);
      expect(await s.exited).toEqual({ code: 0, signal: null });
      const header = headerOf(s.child.pid);
      const text = s.log();
      expect(text.startsWith(header)).toBe(true);
      const ign = BigInt(`0x${/^SigIgn:\s*([0-9a-f]+)$/m.exec(text)![1]}`);
      const blk = BigInt(`0x${/^SigBlk:\s*([0-9a-f]+)$/m.exec(text)![1]}`);
      expect(ign & (1n << 12n), text).toBe(0n); // SIGPIPE (13)
      expect(ign, text).toBe(0n);
      expect(blk, text).toBe(0n);
    },
    T,
  );

  it(
    'finds a bare argv[0] through env.PATH',
    async () => {
      const s = start(['sh', '-c', 'echo ok >&3'], { env: { PATH: '/usr/bin:/bin' } });
      expect(await s.fd3.next()).toBe('ok');
      expect(await s.exited).toEqual({ code: 0, signal: null });
    },
    T,
  );
});
