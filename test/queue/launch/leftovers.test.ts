// What a script leaves running is ended with its run: TERM at once, KILL after the queue's kill grace; in a run cgroup even what left the process group (setsid, a double fork).
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { QueueProc, addQueue, waitFor } from '../../helpers/rq-root.js';
import { perTestRoot } from '../../helpers/per-test-root.js';
import { pidInFile } from '../../helpers/process-groups.js';
import { cgroupHome, ownCgroupHome } from '../../../src/queue/launch/cgroup-fs.js';

const ctx = perTestRoot();

// Background processes close fds 3/4 (but `holder`, as a plain `job &` in bash does not). `daemon` is the
// classic double fork: a subshell starts setsid(1) and exits, so the daemon is an orphan in a
// session of its own. The script waits until it has left the session, so the test is about that.
// `crash` leaves such a daemon and then keeps running, until a rerun finds the daemon's pid file.
const SCRIPT = `#!/bin/bash
own_session() { until [ -s "$1" ] && pid=$(cat "$1") && [ "$(cut -d' ' -f6 /proc/$pid/stat)" = "$pid" ]; do sleep 0.01; done; }
sed -n 's/^0:://p' /proc/self/cgroup > "$RQ_PARAM2.cgroup"
case "$RQ_PARAM1" in
  bg) sleep 1000 >/dev/null 2>&1 3>&- 4>&- & echo $! > "$RQ_PARAM2" ;;
  # The pid is written once TERM is ignored, and the script waits for it: a TERM before the trap would end it.
  stubborn) ( trap '' TERM; echo $BASHPID > "$RQ_PARAM2.tmp"; mv "$RQ_PARAM2.tmp" "$RQ_PARAM2"; exec sleep 1000 ) >/dev/null 2>&1 3>&- 4>&- &
    until [ -s "$RQ_PARAM2" ]; do sleep 0.01; done ;;
  daemon) ( setsid sleep 1000 >/dev/null 2>&1 3>&- 4>&- & echo $! > "$RQ_PARAM2.tmp"; mv "$RQ_PARAM2.tmp" "$RQ_PARAM2" )
    own_session "$RQ_PARAM2" ;;
  stubborn-daemon) setsid bash -c 'trap "" TERM; echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 1000' "$RQ_PARAM2" >/dev/null 2>&1 3>&- 4>&- &
    own_session "$RQ_PARAM2" ;;
  # A background job as bash starts one, fd 3 inherited: on TERM it tells on fd 3 and records whether rq was still reading it.
  holder) ( trap '' PIPE; trap 'if echo "beat" >&3; then r=read; else r=closed; fi; echo $r > "$RQ_PARAM2.tmp"; mv "$RQ_PARAM2.tmp" "$RQ_PARAM2.term"; exit 0' TERM
      echo $BASHPID > "$RQ_PARAM2.tmp"; mv "$RQ_PARAM2.tmp" "$RQ_PARAM2"; sleep 1000 & wait ) >/dev/null 2>&1 4>&- &
    until [ -s "$RQ_PARAM2" ]; do sleep 0.01; done ;;
  # Runs until the test makes "$RQ_PARAM2.go": runs side by side.
  wait) until [ -e "$RQ_PARAM2.go" ]; do sleep 0.01; done ;;
  crash) if [ ! -e "$RQ_PARAM2" ]; then
      ( setsid sleep 1000 >/dev/null 2>&1 3>&- 4>&- & echo $! > "$RQ_PARAM2.tmp"; mv "$RQ_PARAM2.tmp" "$RQ_PARAM2" )
      sleep 1000 3>&- 4>&-
    fi ;;
esac
echo "done left $RQ_PARAM1 behind" >&3
`;

/** Running, or stopped: not gone and not a zombie waiting for init to reap it. */
async function running(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

/** Pids a test left on purpose (a daemon the fallback cannot reach) or by failing: killed after it. */
const strays: number[] = [];
afterEach(() => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
});

async function queue(killGrace: number, env: NodeJS.ProcessEnv, extra: Record<string, unknown> = {}): Promise<QueueProc> {
  const script = path.join(ctx.t.root, 'leaves.sh');
  await fs.writeFile(script, SCRIPT, { mode: 0o755 });
  await addQueue(ctx.t.root, 'lo', { script, extra: { kill_grace: killGrace, ...extra } });
  return (ctx.q = await QueueProc.start(ctx.t.root, 'lo', { env }));
}

/** Runs mode `mode` to done; the pid it left (watched for the test's end) and the directory of its run cgroup. */
async function leave(q: QueueProc, mode: string): Promise<{ pid: number; cgroup: string }> {
  const pidFile = path.join(ctx.t.root, `${mode}.pid`);
  const id = await q.send({ param1: mode, param2: pidFile });
  await q.waitState(id, ['done']);
  const pid = await pidInFile(pidFile);
  strays.push(pid);
  return { pid, cgroup: cgroupOf(pidFile) };
}

/** The directory of cgroup v2 path `p` (as /proc/<pid>/cgroup names it). */
function cgroupDir(p: string): string {
  const home = cgroupHome(fsSync.readFileSync('/proc/self/mountinfo', 'utf8'), `0::${p}\n`);
  if (!home.ok) throw new Error(home.why);
  return home.dir;
}

/** The run cgroup of the run that wrote `<file>.cgroup` (the script's first line: read once it is whole). */
function cgroupOf(file: string): string {
  return cgroupDir(fsSync.readFileSync(`${file}.cgroup`, 'utf8').trim());
}

/** The run cgroups in `parent`. */
function runCgroupsIn(parent: string): string[] {
  return fsSync
    .readdirSync(parent, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => path.join(parent, e.name));
}

const logText = () => fs.readFile(path.join(ctx.t.root, 'log', 'queue-lo.log'), 'utf8');
const logged = (text: string) => waitFor(async () => (await logText()).includes(text), `"${text}" in the queue's log`);

const CGROUP_STARTED = 'each script runs in a cgroup of its own';
/** The queue's parent cgroup, as the line that says its scripts run in cgroups names it. */
async function parentCgroup(): Promise<string> {
  await logged(CGROUP_STARTED);
  const line = (await logText()).split('\n').find((l) => l.includes(CGROUP_STARTED))!;
  return (JSON.parse(line) as { cgroup: string }).cgroup;
}

/** Why this machine cannot give a queue run cgroups (the tests needing them are skipped, saying so), or null. */
function noCgroups(): string | null {
  const home = ownCgroupHome();
  if (!home.ok) return home.why;
  const probe = path.join(home.dir, `rq-test-probe-${process.pid}`);
  try {
    fsSync.mkdirSync(probe);
    const kill = fsSync.existsSync(path.join(probe, 'cgroup.kill'));
    fsSync.rmdirSync(probe);
    return kill ? null : 'no cgroup.kill (Linux 5.14 or later)';
  } catch (err) {
    return `cannot make a cgroup in ${home.dir}: ${(err as Error).message}`;
  }
}
const WHY_NOT = noCgroups();

describe.each([
  ['the native spawner', {}],
  ['the child_process gate', { RQ_SPAWN: 'node' }],
])('with %s', (_, launcher) => {
  describe('processes a script leaves in its group', () => {
    it('get TERM when the run ends', async () => {
      const { pid } = await leave(await queue(30, launcher), 'bg');
      await waitFor(async () => !(await running(pid)), `the background sleep ${pid} to be ended`);
      await logged('left processes in its group: sent them TERM');
    });

    it('get TERM as the script exits, while rq still reads fd 3, though they hold it open', async () => {
      // Not when fd 3 closes, which a background job holding it puts off: the run ends with its script.
      const { pid } = await leave(await queue(30, launcher), 'holder');
      const term = path.join(ctx.t.root, 'holder.pid.term');
      await waitFor(() => fsSync.existsSync(term), `the background job ${pid} to get TERM`);
      expect(await fs.readFile(term, 'utf8')).toBe('read\n');
    });

    it('get KILL once they outlive the kill grace', async () => {
      const { pid } = await leave(await queue(1, launcher), 'stubborn');
      await logged('sent them TERM');
      // TERM is ignored: it is still there until the grace is over.
      expect(await running(pid)).toBe(true);
      await waitFor(async () => !(await running(pid)), `the stubborn sleep ${pid} to be killed`, 10_000);
      await logged('outlived the kill grace: sent them KILL');
    });
  });

  describe.skipIf(WHY_NOT !== null)(`in a run cgroup${WHY_NOT ? ` (skipped: ${WHY_NOT})` : ''}`, () => {
    it('a daemon that left the group (double fork, setsid) gets TERM when the run ends, and the run cgroup is removed', async () => {
      const q = await queue(30, launcher);
      await logged(CGROUP_STARTED);
      const { pid, cgroup } = await leave(q, 'daemon');
      expect(path.basename(path.dirname(cgroup))).toMatch(/^rq-lo-[0-9a-f]{8}$/);
      await waitFor(async () => !(await running(pid)), `the daemon ${pid} to be ended`);
      await logged('left processes in its group: sent them TERM');
      await waitFor(() => !fsSync.existsSync(cgroup), `${cgroup} to be removed`);
    });

    it('a daemon that ignores TERM gets KILL after the grace', async () => {
      const { pid, cgroup } = await leave(await queue(1, launcher), 'stubborn-daemon');
      await logged('sent them TERM');
      expect(await running(pid)).toBe(true);
      await waitFor(async () => !(await running(pid)), `the stubborn daemon ${pid} to be killed`, 10_000);
      await logged('outlived the kill grace: sent them KILL');
      await waitFor(() => !fsSync.existsSync(cgroup), `${cgroup} to be removed`);
    });

    it("a daemon left by a queue that was SIGKILLed is killed when the queue starts again, and its run's cgroup removed", async () => {
      const q = await queue(30, launcher);
      const pidFile = path.join(ctx.t.root, 'crash.pid');
      const id = await q.send({ param1: 'crash', param2: pidFile });
      const pid = await pidInFile(pidFile);
      strays.push(pid);
      await waitFor(
        async () => (await fs.readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ')[3] === String(pid),
        `the daemon ${pid} to be in a session of its own`,
      );
      const cgroup = cgroupOf(pidFile);
      const { ino } = fsSync.statSync(cgroup); // The queue started again may make one of the same name.
      await q.kill9();
      expect(await running(pid)).toBe(true);
      const again = (ctx.q = await QueueProc.start(ctx.t.root, 'lo', { env: launcher }));
      await logged('killed what scripts of a previous queue process left in their run cgroups');
      await waitFor(async () => !(await running(pid)), `the daemon ${pid} to be killed`);
      await waitFor(() => fsSync.statSync(cgroup, { throwIfNoEntry: false })?.ino !== ino, `${cgroup} to be removed`);
      // Interrupted, it runs again; the daemon's pid file says it has been there.
      await again.waitState(id, ['done']);
    });

    it('a run killed at its timeout takes its daemon with it', async () => {
      const q = await queue(30, launcher);
      const pidFile = path.join(ctx.t.root, 'crash.pid');
      const id = await q.send({ param1: 'crash', param2: pidFile, timeout: 0.5 });
      const pid = await pidInFile(pidFile);
      strays.push(pid);
      await q.waitState(id, ['err']);
      await waitFor(async () => !(await running(pid)), `the daemon ${pid} to be ended`);
      await waitFor(() => !fsSync.existsSync(cgroupOf(pidFile)), 'the run cgroup to be removed');
    });

    it('a run starts in a cgroup made before its message came; the next is made as it starts, and its own is kept for a later run', async () => {
      const q = await queue(30, launcher);
      const parent = await parentCgroup();
      const runCgroups = () => runCgroupsIn(parent);
      const [spare, ...more] = runCgroups();
      expect(more).toEqual([]);
      expect(path.basename(spare)).toMatch(/^run-\d+$/);
      expect(fsSync.readFileSync(path.join(spare, 'cgroup.procs'), 'utf8')).toBe('');
      const file = path.join(ctx.t.root, 'nothing');
      await q.waitState(await q.send({ param1: 'nothing', param2: file }), ['done']);
      expect(cgroupOf(file)).toBe(spare);
      // One made ahead as the run started; the run's own kept, as it left nothing.
      await waitFor(() => runCgroups().length === 2, 'a cgroup made ahead beside the kept one');
      expect(runCgroups()).toContain(spare);
      await q.waitState(await q.send({ param1: 'nothing', param2: file }), ['done']);
      expect(cgroupOf(file)).toBe(spare);
      // Ready cgroups removed behind the queue's back: the next run gets a cgroup made for it, without a word.
      const removed = runCgroups();
      for (const dir of removed) fsSync.rmdirSync(dir);
      await q.waitState(await q.send({ param1: 'nothing', param2: file }), ['done']);
      const third = cgroupOf(file);
      expect(path.dirname(third)).toBe(parent);
      expect(removed).not.toContain(third);
      // Made at the start that found none ready: not a start that failed first and was tried again.
      const log = await logText();
      expect(log).not.toContain('run cgroup not made');
      expect(log).not.toContain('could not start script');
    });

    it('a run cgroup name already taken is skipped, and runs side by side keep their cgroups for later runs', async () => {
      const q = await queue(30, launcher, { num_workers: 2 });
      const parent = await parentCgroup();
      const runCgroups = () => runCgroupsIn(parent);
      const [spare] = runCgroups();
      const n = Number(/^run-(\d+)$/.exec(path.basename(spare))![1]);
      // Cgroups under the names the queue would make next (an operator's, a previous process's): left alone, skipped.
      const taken = [n + 1, n + 2].map((k) => path.join(parent, `run-${k}`));
      for (const dir of taken) fsSync.mkdirSync(dir);
      const [a, b] = ['a', 'b'].map((k) => path.join(ctx.t.root, `side-${k}`));
      const ids = [await q.send({ param1: 'wait', param2: a }), await q.send({ param1: 'wait', param2: b })];
      // Whole once it ends in a newline: the redirection makes the file before sed writes its line.
      const whole = (f: string) => fsSync.existsSync(`${f}.cgroup`) && fsSync.readFileSync(`${f}.cgroup`, 'utf8').endsWith('\n');
      await waitFor(() => whole(a) && whole(b), 'both runs started');
      const used = [a, b].map(cgroupOf);
      expect(used).toContain(spare);
      for (const dir of used) {
        expect(path.dirname(dir)).toBe(parent);
        expect(taken).not.toContain(dir);
      }
      for (const f of [a, b]) fsSync.writeFileSync(`${f}.go`, '');
      for (const id of ids) await q.waitState(id, ['done']);
      // Both left nothing: their cgroups are kept for later runs; the names taken are left alone.
      const kept = runCgroups();
      for (const dir of [...used, ...taken]) expect(kept).toContain(dir);
      expect(await logText()).not.toContain('run cgroup not made');
    });

    it('a stopped queue removes its cgroups', async () => {
      const q = await queue(30, launcher);
      const { cgroup } = await leave(q, 'bg');
      await q.stop();
      expect(fsSync.existsSync(path.dirname(cgroup))).toBe(false);
    });
  });

  it('without run cgroups (RQ_CGROUP=off) keeps scripts in their process groups, which a daemon leaves', async () => {
    const q = await queue(30, { ...launcher, RQ_CGROUP: 'off' });
    await logged('scripts run in their process groups only');
    expect(await logText()).toContain('"why":"RQ_CGROUP=off"');
    const bg = await leave(q, 'bg');
    await waitFor(async () => !(await running(bg.pid)), `the background sleep ${bg.pid} to be ended`);
    const daemon = await leave(q, 'daemon');
    expect(daemon.cgroup).toBe(cgroupDir(fsSync.readFileSync(`/proc/${q.pid}/cgroup`, 'utf8').match(/^0::(.*)$/m)![1]));
    // A run after it is over: the daemon is still there, out of rq's reach.
    await q.waitState(await q.send({ param1: 'nothing', param2: path.join(ctx.t.root, 'nothing') }), ['done']);
    expect(await running(daemon.pid)).toBe(true);
  });
});

describe.skipIf(WHY_NOT !== null)(`a run cgroup that cannot be made${WHY_NOT ? ` (skipped: ${WHY_NOT})` : ''}`, () => {
  it('leaves the run to its process group and says so; the queue goes on', async () => {
    const q = await queue(30, {});
    const first = await leave(q, 'bg');
    await waitFor(() => !fsSync.existsSync(first.cgroup), `${first.cgroup} to be removed`);
    // The parent going away under the queue (an operator, a cgroup manager) makes every run's mkdir fail.
    const parent = path.dirname(first.cgroup);
    for (const e of fsSync.readdirSync(parent, { withFileTypes: true })) if (e.isDirectory()) fsSync.rmdirSync(path.join(parent, e.name));
    fsSync.rmdirSync(parent);
    const second = await leave(q, 'bg');
    expect(second.cgroup).toBe(cgroupDir(fsSync.readFileSync(`/proc/${q.pid}/cgroup`, 'utf8').match(/^0::(.*)$/m)![1]));
    await logged('run cgroup not made: this run is kept by its process group only');
    await waitFor(async () => !(await running(second.pid)), `the background sleep ${second.pid} to be ended with its group`);
  });
});
