// Launchers' script I/O, the same from the child_process gate and the native spawner: the RQ START header and the log (with its size limit), fd 3 and fd 4, stdin at EOF. Real processes.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LAUNCHERS, T, launchSession } from './launcher-harness.js';

describe.each(LAUNCHERS)('%s launcher', (name, launch) => {
  const session = launchSession(name, launch);
  const { sh, headerOf } = session;

  it(
    'writes the RQ START header with the script pid to the log before anything the script prints',
    async () => {
      const s = sh('echo out; echo err >&2');
      expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(s.child.pid).toBeGreaterThan(0);
      expect(s.log()).toBe(`${headerOf(s.child.pid)}out\nerr\n`);
    },
    T,
  );

  it(
    'delivers lines the script writes on fd 3 to fromScript, ending when the script exits',
    async () => {
      const s = sh('echo "one $$" >&3; echo two >&3');
      expect(await s.fd3.next()).toBe(`one ${s.child.pid}`);
      expect(await s.fd3.next()).toBe('two');
      expect(await s.fd3.next()).toBeNull();
      expect(await s.exited).toEqual({ code: 0, signal: null });
    },
    T,
  );

  it(
    'delivers lines written to toScript on the script fd 4',
    async () => {
      const s = sh('echo ready >&3; read x <&4; echo "got $x" >&3');
      expect(await s.fd3.next()).toBe('ready');
      s.child.toScript.write('hello there\n');
      expect(await s.fd3.next()).toBe('got hello there');
      expect(await s.exited).toEqual({ code: 0, signal: null });
    },
    T,
  );

  it(
    'gives the script EOF on fd 4 once toScript is ended',
    async () => {
      const s = sh('echo ready >&3; if read x <&4; then echo "line $x" >&3; else echo "eof4 $x" >&3; fi');
      expect(await s.fd3.next()).toBe('ready');
      s.child.toScript.end();
      expect(await s.fd3.next()).toBe('eof4 ');
      expect(await s.exited).toEqual({ code: 0, signal: null });
    },
    T,
  );

  it(
    'starts the script with stdin at EOF',
    async () => {
      const s = sh('cat; echo eof >&3');
      expect(await s.fd3.next()).toBe('eof');
      expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(s.log()).toBe(headerOf(s.child.pid));
    },
    T,
  );

  it(
    'with a fileSizeLimit, stops the log at that size after the header: writes past it fail with EFBIG (no SIGXFSZ), the script and its children go on',
    async () => {
      // head is a child of the script: the limit and the ignored SIGXFSZ are inherited. Killed by
      // SIGXFSZ, sh would report 153; a write refused with EFBIG makes head exit 1.
      const s = sh('head -c 10000 /dev/zero; echo "head $?" >&3; echo more; echo "echo $?" >&3', { fileSizeLimit: 4096 });
      expect(await s.fd3.next()).toBe('head 1');
      expect(await s.fd3.next()).toBe('echo 1');
      expect(await s.exited).toEqual({ code: 0, signal: null });
      const log = fs.readFileSync(s.logFile);
      expect(log.length).toBe(4096);
      expect(log.subarray(0, headerOf(s.child.pid).length).toString()).toBe(headerOf(s.child.pid));
      expect(log.subarray(headerOf(s.child.pid).length).every((b) => b === 0)).toBe(true);
    },
    T,
  );
});
