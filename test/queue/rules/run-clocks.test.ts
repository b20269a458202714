// Per-run timeout (rq-beyond §B10) and heartbeat stall detection (§B11), with real scripts and their process groups.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';
import { groupMembers, pidInFile } from '../../helpers/process-groups.js';

let t: TestRoot;
const procs: Record<string, QueueProc> = {};

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'clocks', { num_workers: 4, extra: { kill_grace: 0.3 } });
  await addQueue(t.root, 'output', { num_workers: 2, extra: { heartbeat_output: true, kill_grace: 0.3 } });
  await addQueue(t.root, 'timed', { num_workers: 2, extra: { timeout: 0.4, kill_grace: 0.3 } });
  for (const q of ['clocks', 'output', 'timed']) procs[q] = await QueueProc.start(t.root, q);
});
afterAll(async () => {
  await Promise.all(Object.values(procs).map((p) => p.stop()));
  await t?.cleanup();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function history(m: { path: string }): Promise<Record<string, any>[]> {
  const text = await fs.readFile(path.join(t.root, m.path, 'history'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

describe('timeout', () => {
  it('a hung script is killed with its whole group at the timeout and ends in err with outcome failed', async () => {
    const q = procs.clocks;
    const pidFile = path.join(t.root, 'hung.pid');
    const id = await q.send({ param1: 'forever', param2: pidFile, timeout: 0.5 });
    const pid = await pidInFile(pidFile);
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.status).toMatch(/^err - TIMEOUT - killed after 0\.\d+s \(timeout 0\.5s\)$/);
    expect(m.outcome).toBe('failed');
    expect(m.last_failure).toMatchObject({ kind: 'timeout', signal: 'SIGTERM' });
    // `forever` leaves a `sleep 1000` child in its group: the group is gone, not just the script.
    expect(await groupMembers(pid)).toEqual([]);
    const h = await history(m);
    expect(h.map((l) => l.event ?? `${l.from}→${l.to}`)).toEqual(['que→run', 'timeout', 'run→err']);
    expect(h[1].after_s).toBeGreaterThanOrEqual(0.5);
  });

  it('the script is told its timeout, deadline and grace', async () => {
    const q = procs.clocks;
    const id = await q.send({ param1: 'timed', timeout: 0.5 });
    const m = await q.waitState(id, ['err']);
    const log = await fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8');
    const [, timeout, deadline, grace, heartbeat] = /timeout=(\S*) deadline=(\S*) grace=(\S*) heartbeat=(\S*)/.exec(log)!;
    expect([timeout, grace, heartbeat]).toEqual(['0.5', '0.3', '']);
    expect(Math.abs(Number(deadline) - Date.parse((await history(m))[0].at) / 1000)).toBeLessThanOrEqual(1.5);
  });

  it('a script that ignores TERM is killed after kill_grace', async () => {
    const q = procs.clocks;
    const pidFile = path.join(t.root, 'stubborn.pid');
    const id = await q.send({ param1: 'stubborn', param2: pidFile, timeout: 0.3 });
    const pid = await pidInFile(pidFile);
    const m = await q.waitState(id, ['err']);
    expect(m.status).toMatch(/^err - TIMEOUT - killed after/);
    expect(m.last_failure).toMatchObject({ kind: 'timeout', signal: 'SIGKILL' });
    expect(await fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8')).toContain('got TERM');
    expect(await groupMembers(pid)).toEqual([]);
  });

  it('a child that survives TERM after its leader exited is killed too', async () => {
    const q = procs.clocks;
    const pidFile = path.join(t.root, 'orphan.pid');
    const id = await q.send({ param1: 'orphan', param2: pidFile, timeout: 0.3 });
    const child = await pidInFile(pidFile);
    expect((await q.waitState(id, ['err'])).status).toMatch(/^err - TIMEOUT/);
    const gone = async () => {
      const stat = await fs.readFile(`/proc/${child}/stat`, 'utf8').catch(() => '');
      return stat === '' || stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z';
    };
    // The KILL goes out when the leader is reaped, just before the message moves: no wait needed.
    expect(await gone()).toBe(true);
  });

  it('a timed-out run is retried with a fresh timeout, then exhausts', async () => {
    const q = procs.clocks;
    const id = await q.send({ param1: 'timed', timeout: 0.3, max_retries: 1, backoff_base: 0.1, min_retry_delay: 0, retry_jitter: 0 });
    const m = await q.waitState(id, ['err']);
    expect(m.status).toMatch(/^err - RETRIES EXHAUSTED \(1\) - TIMEOUT - killed after 0\.\d+s \(timeout 0\.3s\)$/);
    expect(m.outcome).toBe('exhausted');
    const h = await history(m);
    expect(h.map((l) => l.event ?? `${l.from}→${l.to}`)).toEqual(['que→run', 'timeout', 'run→que', 'que→run', 'timeout', 'run→err']);
    expect(h[2]).toMatchObject({ actor: 'retry', failure: 'timeout' });
  });

  it('the queue default applies to messages that set no timeout', async () => {
    const q = procs.timed;
    const m = await q.waitState(await q.send({ param1: 'timed' }), ['err']);
    expect(m.status).toMatch(/\(timeout 0\.4s\)$/);
  });

  it('a run that finishes in time is untouched by its timeout', async () => {
    const q = procs.timed;
    const m = await q.waitState(await q.send({ param1: 'slow', param2: '0.1' }), ['done', 'err']);
    expect(m.status).toBe('done - slept');
  });
});

describe('heartbeat', () => {
  it('a script that beats every 0.2 s outlives a 1 s heartbeat_timeout; beat lines leave the status alone', async () => {
    const q = procs.clocks;
    const id = await q.send({ param1: 'beating', param2: '8', heartbeat_timeout: 1 });
    // `running` shows the clock moving: a later beat than the start, its deadline one heartbeat after it.
    type Entry = { msg_id: string; started_at: string; last_beat: string; deadline: string; heartbeat_timeout: number };
    const entry = await waitFor(async () => {
      const e = ((await q.cmd('running'))[1] as Entry[]).find((r) => r.msg_id === id);
      return e && Date.parse(e.last_beat) > Date.parse(e.started_at) ? e : undefined;
    }, 'a beat after the start in running');
    expect(entry.heartbeat_timeout).toBe(1);
    expect(Date.parse(entry.deadline) - Date.parse(entry.last_beat)).toBe(1000);
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.status).toBe('done - kept beating');
    expect((await history(m)).some((l) => l.event === 'stall')).toBe(false);
  });

  it('a silent script stalls: killed and finished with STALLED', async () => {
    const q = procs.clocks;
    const id = await q.send({ param1: 'timed', heartbeat_timeout: 1 });
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.status).toMatch(/^err - STALLED - no progress for 1(\.\d+)?s \(heartbeat_timeout 1s\)$/);
    expect(m.outcome).toBe('failed');
    const stall = (await history(m)).find((l) => l.event === 'stall');
    expect(stall?.silent_s).toBeGreaterThanOrEqual(1);
  });

  it('with heartbeat_output, output to stdio.log counts as a sign of life', async () => {
    const alive = await procs.output.waitState(await procs.output.send({ param1: 'chatty', param2: '8', heartbeat_timeout: 1 }), ['done', 'err']);
    expect(alive.status).toBe('done - by output alone');
    // The same script on a queue without heartbeat_output: output is not a beat.
    const stalled = await procs.clocks.waitState(await procs.clocks.send({ param1: 'chatty', param2: '8', heartbeat_timeout: 1 }), ['done', 'err']);
    expect(stalled.status).toMatch(/^err - STALLED/);
  });
});
