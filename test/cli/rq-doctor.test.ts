// `rq doctor` and the reasons behind a queue that does not run (sendmesg, statusmesg, waiting, queues, rq-mgr status, /healthz), as a user meets them: a linked script without its execute bit, a missing script, rq-mgr stopped.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, MgrProc, run } from '../helpers/mgr-proc.js';
import { killLeftoverGroups } from '../helpers/process-groups.js';
import { type Run, runRq } from '../helpers/rq-cli.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';
import { linkTimer } from '../timers/timers-proc.js';

let t: TestRoot;
let mgr: MgrProc;
let apps: string;
killLeftoverGroups();

const rq = (args: string[]): Promise<Run> => runRq(args, { root: t.root });
/** What the doctor lists, by subject. */
const doctorJson = async () =>
  JSON.parse((await rq(['doctor', '--json'])).out[0]) as {
    ok: boolean;
    mgr: boolean;
    running: number;
    findings: { severity: string; subject: string; reason: string; fix: string }[];
  };

/** A directory with a run of `mode`, linked into scandir/ as `name`; the run's path. */
async function linked(name: string, mode: number): Promise<string> {
  const dir = path.join(apps, name);
  await fs.mkdir(dir);
  const run = path.join(dir, 'run');
  await fs.writeFile(run, '#!/bin/sh\necho "done ok" >&3\n');
  await fs.chmod(run, mode);
  await fs.symlink(dir, path.join(t.root, 'scandir', name));
  return run;
}

beforeAll(async () => {
  t = await makeRoot();
  apps = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-doctor-apps-'));
  await addQueue(t.root, 'fine');
  mgr = await MgrProc.start(t.root);
  await mgr.waitQueueUp('fine');
}, 60_000);

afterAll(async () => {
  await mgr?.stop();
  await t?.cleanup();
  await fs.rm(apps, { recursive: true, force: true });
});

describe('rq doctor', () => {
  it('all well: exit 0 and one line', async () => {
    expect(await rq(['doctor'])).toEqual({ code: 0, out: ['ok: 1 queue running, nothing to fix'], err: [] });
  });

  it('a linked script without its execute bit: sendmesg says why, doctor lists it with the fix; chmod +x and it is a queue', async () => {
    const run = await linked('noexec', 0o644);
    // rq-mgr's scandir pass is what refuses it: wait until it has.
    await waitFor(async () => (await doctorJson()).findings.some((f) => f.subject === 'scandir/noexec'), 'rq-mgr to refuse scandir/noexec');
    const send = await rq(['sendmesg', '--dest', 'noexec', '--param1', 'x']);
    expect(send.code).toBe(1);
    expect(send.err).toEqual([`rq: queue noexec is not running: scandir/noexec/run is not executable (chmod +x ${run})`]);
    const d = await rq(['doctor']);
    expect(d.code).toBe(1);
    expect(d.out).toEqual([`problem scandir/noexec: scandir/noexec/run is not executable; fix: chmod +x ${run}`, 'fail: 1 problem to fix, 1 queue running']);
    // A name nobody linked keeps the classic answer.
    expect((await rq(['sendmesg', '--dest', 'nobody', '--param1', 'x'])).err).toEqual(['rq: queue not found: nobody']);

    await fs.chmod(run, 0o755);
    await mgr.waitQueueUp('noexec');
    await waitFor(async () => (await doctorJson()).ok, 'doctor to find nothing to fix');
    expect(await rq(['doctor'])).toEqual({ code: 0, out: ['ok: 2 queues running, nothing to fix'], err: [] });
  });

  it('a missing script: SCRIPTERROR with its reason in statusmesg of a waiting message, rq queues, /healthz and doctor', async () => {
    const script = path.join(apps, 'gone', 'run');
    await addQueue(t.root, 'broken', { script });
    // A queue dir added while rq-mgr runs is started by a HUP's rescan.
    mgr.child.kill('SIGHUP');
    await mgr.waitQueueUp('broken');
    const sent = await rq(['sendmesg', '--dest', 'broken', '--param1', 'x']);
    expect(sent.code).toBe(0);
    const id = sent.out[0].slice('ok '.length);
    const reason = `script ${script} does not exist`;
    await waitFor(
      async () => (await rq(['statusmesg', '--msg_id', id])).out[0] === `ok que - waiting: queue script error: ${reason}`,
      'statusmesg to say why the message waits',
      20_000,
    );

    // waiting lists no message of its own reason; the queue's reason is said under it.
    expect(await rq(['waiting', 'broken'])).toEqual({
      code: 0,
      out: ['ok 0'],
      err: [`rq: queue broken is SCRIPTERROR: ${reason}; its ready messages wait for it too`],
    });
    const queues = await rq(['queues']);
    expect(queues.out).toContain(`broken SCRIPTERROR prep 0 que 1 run 0 done 0 relayed 0 err 0 err_acked 0 - ${reason}`);
    expect(JSON.parse((await rq(['queues', '--json'])).out[0])).toContainEqual(expect.objectContaining({ queue: 'broken', status: 'SCRIPTERROR', reason }));

    // rq-mgr status: the worker runs, and its queue says why it runs no script.
    const st = await run(BIN('rq-mgr'), ['status', '--root', t.root]);
    expect(st.stdout).toMatch(new RegExp(`^  broken +RUNNING +pid \\d+  uptime \\d+ s  SCRIPTERROR: ${reason.replace(/[/.]/g, '\\$&')}$`, 'm'));
    expect(st.stdout).toMatch(/^ {2}fine +RUNNING +pid \d+ {2}uptime \d+ s$/m);

    const port = JSON.parse(await fs.readFile(path.join(t.root, 'config', 'config.json'), 'utf8')).port as number;
    const health = await waitFor(
      async () =>
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.json(),
          () => null,
        ),
      'the web to answer /healthz',
      20_000,
      100,
    );
    expect(health.queues.broken).toEqual({ status: 'SCRIPTERROR', healthy: false, reason });
    expect(health.failing).toContainEqual({
      name: 'queue broken',
      error: expect.stringMatching(new RegExp(`^status SCRIPTERROR is not one of healthy_states .*: ${reason.replace(/[/.]/g, '\\$&')}$`)),
    });

    const d = await rq(['doctor']);
    expect(d.code).toBe(1);
    expect(d.out[0]).toBe(
      `problem queue broken: SCRIPTERROR: ${reason}; its messages wait in que; fix: make the script exist and executable at that path (chmod +x, or restore the file or link); the queue notices and starts its messages`,
    );
    expect(d.out.at(-1)).toBe('fail: 1 problem to fix, 2 queues running');
  });

  it("an operator's PAUSE is listed as info, not as a problem", async () => {
    await fs.writeFile(path.join(t.root, 'config', 'fine.pause'), '');
    await waitFor(async () => (await doctorJson()).findings.some((f) => f.subject === 'queue fine' && f.severity === 'info'), 'doctor to see fine paused');
    const d = await doctorJson();
    expect(d.findings.find((f) => f.subject === 'queue fine')).toMatchObject({ severity: 'info', fix: 'rq resume fine' });
    // A message waiting in a queue whose script works keeps the classic status text, byte for byte.
    const sent = await rq(['sendmesg', '--dest', 'fine', '--param1', 'done']);
    expect((await rq(['statusmesg', '--msg_id', sent.out[0].slice('ok '.length)])).out).toEqual(['ok que']);
    expect(await rq(['doctor'])).toMatchObject({
      code: 1,
      out: [
        expect.stringMatching(/^problem queue broken: /),
        'info queue fine: paused by an operator (' +
          path.join(t.root, 'config', 'fine.pause') +
          '): running messages finish, no new one starts; fix: rq resume fine',
        'fail: 1 problem to fix, 1 queue running',
      ],
    });
    await fs.rm(path.join(t.root, 'config', 'fine.pause'));
  });

  it('a timer file rq-timers refused or ignored is listed with why, in name order, until it is removed', async () => {
    const file = await linkTimer(t.root, 'hourly.json', { period: 'hourly', msg: { dest: 'fine' } });
    const dots = await linkTimer(t.root, 'two.dots.json', { period: 600, msg: { dest: 'fine' } });
    const timerFindings = async () => (await doctorJson()).findings.filter((f) => f.subject.startsWith('timers/'));
    await waitFor(async () => (await timerFindings()).length === 2, 'doctor to list both timer files');
    const [listed, ignored] = await timerFindings();
    expect(ignored).toMatchObject({
      subject: 'timers/two.dots.json',
      reason: 'ignored: a timer file is named <name>.json or <name>.yaml with exactly one dot; no timer is defined by it',
      fix: 'rename it to <name>.json or <name>.yaml (one dot), or remove it',
    });
    expect(listed).toEqual({
      severity: 'problem',
      subject: 'timers/hourly.json',
      reason: expect.stringMatching(/^period: expected .*received "hourly"; no timer is defined by it$/),
      fix: 'correct it (or the file it links to), or remove it: rq-timers reads it again at once',
    });
    const d = await rq(['doctor']);
    expect(d.code).toBe(1);
    expect(d.out).toContain(`problem timers/hourly.json: ${listed.reason}; fix: ${listed.fix}`);
    for (const [link, target] of [
      ['hourly.json', file],
      ['two.dots.json', dots],
    ])
      await Promise.all([fs.rm(path.join(t.root, 'timers', link)), fs.rm(target)]);
    await waitFor(async () => (await timerFindings()).length === 0, 'doctor to forget the timer files');
  });

  it('a timer whose message was not delivered (its dest names no queue) is listed with the occurrence and why, until it is removed', async () => {
    const file = await linkTimer(t.root, 'orphan.json', { period: 600, msg: { dest: 'nosuch' } });
    const timerFindings = async () => (await doctorJson()).findings.filter((f) => f.subject.startsWith('timers/'));
    await waitFor(async () => (await timerFindings()).length === 1, 'doctor to list the undelivered timer');
    expect(await timerFindings()).toEqual([
      {
        severity: 'problem',
        subject: 'timers/orphan.json',
        reason: expect.stringMatching(
          /^its message for \d{4}-\d\d-\d\dT[\d:.]+Z was not delivered: queue nosuch not found \(no directory .*\/queues\/nosuch\)$/,
        ),
        fix: 'make its dest a queue that takes the message (create that queue, or correct dest in timers/orphan.json): rq-timers tries again until the next occurrence supersedes it',
      },
    ]);
    expect((await rq(['doctor'])).code).toBe(1);
    await Promise.all([fs.rm(path.join(t.root, 'timers', 'orphan.json')), fs.rm(file)]);
    await waitFor(async () => (await timerFindings()).length === 0, 'doctor to forget the removed timer');
  });

  it('rq-mgr stopped: one line, exit 1', async () => {
    await mgr.stop();
    const d = await rq(['doctor']);
    expect(d.code).toBe(1);
    expect(d.out).toHaveLength(1);
    expect(d.out[0]).toMatch(
      new RegExp(
        `^problem rq-mgr: rq-mgr does not answer on .*queuemgr\\.sock \\(.*\\); nothing else can be checked; fix: start it: bin/rq-mgr start --root ${t.root.replace(/[/.]/g, '\\$&')}$`,
      ),
    );
  });
});
