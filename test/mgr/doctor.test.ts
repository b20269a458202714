// The doctor's checks against stand-in rq-mgr and queue answers: what each finding says, what counts as a problem, what is listed once.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Answer, Refusal } from '../../src/ipc/answer.js';
import type { RefusedEntry, WorkerInfo } from '../../src/ipc/mgr-client.js';
import type { StatusDetail } from '../../src/ipc/queue-client.js';
import { type DoctorDeps, doctorReport } from '../../src/mgr/doctor.js';
import { RqError } from '../../src/errors.js';
import { mountTmpfs } from '../helpers/disk-fill.js';

let root: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-doctor-'));
  for (const d of ['config', 'queues', 'scandir']) await fs.mkdir(path.join(root, d));
  await fs.writeFile(path.join(root, 'config', 'config.json'), JSON.stringify({ host: '127.0.0.1', port: 3333 }), { mode: 0o600 });
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const ok = <T>(value: T): Answer<T> => ({ ok: true, value, raw: ['ok', value] });
const worker = (status: string, last_exit: string | null = null): WorkerInfo => ({ status, pid: status === 'RUNNING' ? 100 : null, uptime: 1, last_exit });

/** rq-mgr's answer on a host without a fleet: the fleet checks find nothing (test/fleet/doctor-fleet.test.ts has them). */
const noFleet = async (): Promise<Refusal> => ({ ok: false, code: 'RQ_ERR_NO_FLEET', text: 'no fleet', raw: ['fail', 'no fleet', 'RQ_ERR_NO_FLEET'] });

/** A root whose rq-mgr answers with these workers and refusals, and whose queues report these statuses. */
function deps(workers: Record<string, WorkerInfo>, refused: RefusedEntry[], statuses: Record<string, StatusDetail>): DoctorDeps {
  return {
    root,
    mgr: { ping: async () => true, status: async () => ok(workers), refusedQueues: async () => ok(refused), fleet: noFleet, fleetCredential: noFleet },
    timers: { refused: async () => ok([]), undelivered: async () => ok([]) },
    statusDetail: async (q) => {
      if (!statuses[q]) throw RqError.of('RQ_ERR_NO_REPLY', `queue ${q}: no reply`);
      return ok(statuses[q]);
    },
  };
}

describe('doctorReport', () => {
  it('all UP: ok, nothing listed, the running queues counted', async () => {
    const r = await doctorReport(
      deps({ a: worker('RUNNING'), b: worker('RUNNING'), '[web]': worker('RUNNING') }, [], { a: { status: 'UP' }, b: { status: 'UP' } }),
    );
    expect(r).toEqual({ ok: true, mgr: true, running: 2, findings: [] });
  });

  it('rq-mgr down is the one finding, and nothing else is asked', async () => {
    let asked = false;
    const d = deps({}, [], {});
    d.mgr.ping = async () => {
      throw RqError.of('RQ_ERR_NO_REPLY', 'ENOENT');
    };
    d.statusDetail = async () => {
      asked = true;
      return ok({ status: 'UP' });
    };
    const r = await doctorReport(d);
    expect(r.ok).toBe(false);
    expect(r.mgr).toBe(false);
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]).toMatchObject({ severity: 'problem', subject: 'rq-mgr', fix: `start it: bin/rq-mgr start --root ${root}` });
    expect(asked).toBe(false);
  });

  it('names each kind of problem with its fix; PAUSE and DOWN are info; a SCRIPTERROR queue is listed once, not again by its refused link', async () => {
    const refused: RefusedEntry[] = [
      { entry: 'noexec', reason: 'scandir/noexec/run is not executable', fix: 'chmod +x /apps/noexec/run' },
      { entry: 'held', reason: 'scandir/held/run is not executable', fix: 'chmod +x /apps/held/run' },
      {
        entry: 'long',
        reason: 'queues/long: queue name: expected at most 20 …',
        fix: 'move the root to a shorter path, or the messages to a queue with a shorter name',
        dir: true,
      },
    ];
    const workers = {
      held: worker('RUNNING'),
      full: worker('RUNNING'),
      paused: worker('RUNNING'),
      down: worker('RUNNING'),
      dying: worker('BACKOFF', 'exit 1'),
      mute: worker('RUNNING'),
      '[web]': worker('ERROR', 'exit 1'),
      '[timers]': worker('RUNNING'),
    };
    const statuses: Record<string, StatusDetail> = {
      held: { status: 'SCRIPTERROR', reason: 'script /apps/held/run is not executable' },
      full: { status: 'DISK FULL', reason: 'create: ENOSPC' },
      paused: { status: 'PAUSE' },
      down: { status: 'DOWN' },
    };
    const r = await doctorReport(deps(workers, refused, statuses));
    expect(r.ok).toBe(false);
    expect(r.running).toBe(0);
    const by = Object.fromEntries(r.findings.map((f) => [f.subject, f]));
    expect(Object.keys(by).sort()).toEqual([
      'queue down',
      'queue dying',
      'queue full',
      'queue held',
      'queue mute',
      'queue paused',
      'queues/long',
      'scandir/noexec',
      'web',
    ]);
    expect(by['scandir/noexec']).toEqual({
      severity: 'problem',
      subject: 'scandir/noexec',
      reason: 'scandir/noexec/run is not executable',
      fix: 'chmod +x /apps/noexec/run',
    });
    expect(by['queue held']).toMatchObject({ severity: 'problem', reason: 'SCRIPTERROR: script /apps/held/run is not executable; its messages wait in que' });
    expect(by['queue full']).toMatchObject({ severity: 'problem', reason: 'DISK FULL: create: ENOSPC; creates are refused and no script starts' });
    expect(by['queue paused']).toMatchObject({ severity: 'info', fix: 'rq resume paused' });
    expect(by['queue down']).toMatchObject({ severity: 'info', fix: expect.stringMatching(/^rm .*config\/down\.down/) });
    expect(by['queue dying']).toMatchObject({ severity: 'problem', reason: 'its process is BACKOFF (last exit: exit 1)' });
    expect(by['queue mute']).toMatchObject({ severity: 'problem', reason: 'its process does not answer (queue mute: no reply)' });
    expect(by.web).toMatchObject({ severity: 'problem', reason: "rq-mgr's web process is ERROR (last exit: exit 1)" });
  });

  it("limits the host cannot enforce: the fix names the config.json that sets them, a scandir queue's in its link's directory", async () => {
    const reason = 'run limits cannot be enforced here: io_weight: the blkio hierarchy has no weight file (no BFQ in this kernel)';
    // "linked" was made by scandir (its marker) from a link to app/; "made" by create_queue, its config its own.
    const app = path.join(root, 'app');
    await fs.mkdir(app);
    await fs.symlink(app, path.join(root, 'scandir', 'linked'));
    for (const q of ['linked', 'made']) await fs.mkdir(path.join(root, 'queues', q));
    await fs.writeFile(path.join(root, 'queues', 'linked', '.scandir'), '');
    const r = await doctorReport(
      deps({ linked: worker('RUNNING'), made: worker('RUNNING') }, [], {
        linked: { status: 'SCRIPTERROR', reason },
        made: { status: 'SCRIPTERROR', reason },
      }),
    );
    const by = Object.fromEntries(r.findings.map((f) => [f.subject, f.fix]));
    // scandir rewrites queues/linked/config.json from the link's: a change there would be undone.
    // No BFQ is no matter of cgroup hierarchies: the fix says what would let io_weight hold.
    const bfq = "have the queue's disk scheduled by bfq (echo bfq > /sys/block/<disk>/queue/scheduler)";
    expect(by['queue linked']).toBe(
      `remove the limits named from ${app}/config.json, or add "limits_best_effort": true to it, or ${bfq}; the queue reads it again when that file changes`,
    );
    expect(by['queue made']).toBe(
      `remove the limits named from ${root}/queues/made/config.json, or add "limits_best_effort": true to it, or ${bfq}, then reload the queue: kill -HUP $(cat ${root}/queues/made/queue.pid)`,
    );
  });

  it('limits refused because rq-mgr runs with RQ_CGROUP=off, or for want of cgroup hierarchies: the fix names that', async () => {
    for (const q of ['off', 'bare']) await fs.mkdir(path.join(root, 'queues', q));
    const r = await doctorReport(
      deps({ off: worker('RUNNING'), bare: worker('RUNNING') }, [], {
        off: { status: 'SCRIPTERROR', reason: 'run limits cannot be enforced here: memory_max: RQ_CGROUP=off' },
        bare: { status: 'SCRIPTERROR', reason: 'run limits cannot be enforced here: memory_max: no memory hierarchy is mounted' },
      }),
    );
    const by = Object.fromEntries(r.findings.map((f) => [f.subject, f.fix]));
    expect(by['queue off']).toContain('or start rq-mgr without RQ_CGROUP=off in its environment (it turns run cgroups off), then reload');
    expect(by['queue bare']).toContain('or give rq the cgroup hierarchies (docs/operations.md, Run limits), then reload');
  });

  it('each timer file rq-timers refused is a problem naming it; asked only while rq-timers runs; no answer is a problem too', async () => {
    const d = deps({ '[timers]': worker('RUNNING') }, [], {});
    let asked = 0;
    d.timers.refused = async () => {
      asked++;
      return ok([
        {
          file: 'nightly.json',
          reason: 'period: expected a number of seconds, received "soon"',
          fix: 'correct it (or the file it links to), or remove it: rq-timers reads it again at once',
        },
      ]);
    };
    const r = await doctorReport(d);
    expect(r.ok).toBe(false);
    expect(r.findings).toEqual([
      {
        severity: 'problem',
        subject: 'timers/nightly.json',
        reason: 'period: expected a number of seconds, received "soon"; no timer is defined by it',
        fix: 'correct it (or the file it links to), or remove it: rq-timers reads it again at once',
      },
    ]);
    d.timers.refused = async () => {
      throw RqError.of('RQ_ERR_NO_REPLY', 'timers/sock: no reply');
    };
    // Just started, it may not listen yet: no finding.
    expect((await doctorReport(d)).findings).toEqual([]);
    d.mgr.status = async () => ok({ '[timers]': { ...worker('RUNNING'), uptime: 10 } });
    expect((await doctorReport(d)).findings).toEqual([
      {
        severity: 'problem',
        subject: 'timers',
        reason: expect.stringMatching(/^rq-timers did not list its timer files' problems: .*no reply$/),
        fix: "rq-mgr's log says why; bin/rq-mgr restart starts it anew",
      },
    ]);
    // Stopped, rq-timers is its own finding (componentFindings), and its files are not asked for.
    const stopped = deps({ '[timers]': worker('BACKOFF', 'exit 1') }, [], {});
    stopped.timers.refused = async () => {
      asked++;
      return ok([]);
    };
    expect((await doctorReport(stopped)).findings.map((f) => f.subject)).toEqual(['timers']);
    expect(asked).toBe(1);
  });

  it('a timer whose last message was not delivered is a problem naming its file, the occurrence and the error; after the refused files', async () => {
    const d = deps({ '[timers]': worker('RUNNING') }, [], {});
    d.timers.refused = async () => ok([{ file: 'a.json', reason: 'period: expected a number', fix: 'correct it' }]);
    d.timers.undelivered = async () =>
      ok([{ file: 'nightly.json', occurrence: Date.UTC(2030, 0, 1) / 1000, error: 'queue nosuch not found (no directory /r/queues/nosuch)' }]);
    const r = await doctorReport(d);
    expect(r.ok).toBe(false);
    expect(r.findings).toEqual([
      { severity: 'problem', subject: 'timers/a.json', reason: 'period: expected a number; no timer is defined by it', fix: 'correct it' },
      {
        severity: 'problem',
        subject: 'timers/nightly.json',
        reason: 'its message for 2030-01-01T00:00:00.000Z was not delivered: queue nosuch not found (no directory /r/queues/nosuch)',
        fix: 'make its dest a queue that takes the message (create that queue, or correct dest in timers/nightly.json): rq-timers tries again until the next occurrence supersedes it',
      },
    ]);
    // Either list unanswered, once rq-timers has settled, is the one timers finding.
    d.mgr.status = async () => ok({ '[timers]': { ...worker('RUNNING'), uptime: 10 } });
    d.timers.undelivered = async () => {
      throw RqError.of('RQ_ERR_NO_REPLY', 'timers/sock: no reply');
    };
    expect((await doctorReport(d)).findings).toEqual([expect.objectContaining({ subject: 'timers', reason: expect.stringMatching(/problems: .*no reply$/) })]);
  });

  it('only info findings: still ok', async () => {
    const r = await doctorReport(deps({ p: worker('RUNNING'), u: worker('RUNNING') }, [], { p: { status: 'PAUSE' }, u: { status: 'UP' } }));
    expect(r).toMatchObject({ ok: true, running: 1, findings: [{ severity: 'info', subject: 'queue p' }] });
  });

  it('a root on a filesystem under 16 MiB free is a problem saying how much is free and what a full one does', async () => {
    const queues = path.join(root, 'queues');
    const unmount = await mountTmpfs(queues, '4m', 'rq-doctor-disk');
    try {
      const r = await doctorReport(deps({}, [], {}));
      expect(r.findings).toEqual([
        {
          severity: 'problem',
          subject: 'disk',
          reason: `the filesystem of ${queues} has 4096 KiB free, under the 16 MiB rq warns at`,
          fix: 'free space on it: once it is full, queues refuse creates and start no script until there is room again',
        },
      ]);
    } finally {
      await unmount();
    }
  });

  it('config/config.json with passwords and readable by others is a problem; unreadable JSON too', async () => {
    const file = path.join(root, 'config', 'config.json');
    await fs.writeFile(file, JSON.stringify({ host: '127.0.0.1', port: 3333, basic_auth: { users: { ops: 'secret' } } }));
    await fs.chmod(file, 0o644);
    const r = await doctorReport(deps({}, [], {}));
    expect(r.findings).toEqual([
      {
        severity: 'problem',
        subject: 'config/config.json',
        reason: 'holds basic_auth passwords and is readable by others (mode 644)',
        fix: `chmod 600 ${file}`,
      },
    ]);
    await fs.writeFile(file, '{ not json');
    expect((await doctorReport(deps({}, [], {}))).findings).toEqual([
      expect.objectContaining({ severity: 'problem', subject: 'config/config.json', fix: expect.stringContaining(file) }),
    ]);
  });

  it('an invalid config/limits.json is a problem: rq-mgr keeps the limits it had, and refuses keys only the file names', async () => {
    const limits = path.join(root, 'config', 'limits.json');
    await fs.writeFile(limits, JSON.stringify({ reports: 2, 'api:*': 0 }));
    try {
      expect((await doctorReport(deps({}, [], {}))).findings).toEqual([
        {
          severity: 'problem',
          subject: 'config/limits.json',
          reason: expect.stringMatching(/^config\/limits\.json: "api:\*": expected a whole number 1-10000, received 0$/),
          fix: `correct ${limits}: rq-mgr reads it again at once`,
        },
      ]);
      // A fleet-wide key where config.json has no fleet: rq-mgr refuses the file too.
      await fs.writeFile(limits, JSON.stringify({ deploy: { concurrency: 2, scope: 'fleet' } }));
      expect((await doctorReport(deps({}, [], {}))).findings).toEqual([
        expect.objectContaining({ subject: 'config/limits.json', reason: expect.stringContaining('"deploy".scope') }),
      ]);
      await fs.writeFile(limits, JSON.stringify({ reports: 2 }));
      expect((await doctorReport(deps({}, [], {}))).findings).toEqual([]);
    } finally {
      await fs.rm(limits, { force: true });
    }
  });
});
