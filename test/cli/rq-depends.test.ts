// rq's dependency options and commands against real queue processes (rq-beyond §B8, §B1.10, §B1.12): sendmesg/prepmesg --depends and --depends_fail (a dependent waits; the three failure policies), undepend --depends and --all, waiting's dependency lines, the refusals of bad input (exit 1, one line, nothing created or changed).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOneLineError, runRq } from '../helpers/rq-cli.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';
import { NO_MSG, REF_TEXT, cli, later, refOf, shortId } from './depends-limits-harness.js';

describe('dependencies from the command line (rq-beyond §B8)', () => {
  let t: TestRoot;
  let build: QueueProc;
  let deploy: QueueProc;
  const { rq, send, messages } = cli(() => t);

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const message = async (fullId: string): Promise<any> => {
    const q = fullId.includes('/q/build/') ? build : deploy;
    const r = await q.cmd('get_message', { msg_id: shortId(fullId) });
    expect(r[0]).toBe('ok');
    return r[1];
  };
  const proc = (fullId: string) => (fullId.includes('/q/build/') ? build : deploy);
  const finished = (fullId: string) => proc(fullId).waitState(shortId(fullId), ['done', 'err', 'relayed']);
  /** A message of build that stays in the que for an hour, until rescheduled. */
  const held = (mode: 'done' | 'err') => send('build', '--param1', mode, '--due', later());
  const runNow = async (fullId: string) => expect((await rq(['reschedule', '--msg_id', fullId, '--delay', '0'])).code).toBe(0);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const history = async (fullId: string): Promise<any[]> => (await proc(fullId).cmd('get_history', { msg_id: shortId(fullId) }))[1];

  beforeAll(async () => {
    t = await makeRoot();
    await addQueue(t.root, 'build', { num_workers: 2 });
    await addQueue(t.root, 'deploy', { num_workers: 2 });
    [build, deploy] = await Promise.all(['build', 'deploy'].map((n) => QueueProc.start(t.root, n)));
  });

  afterAll(async () => {
    await Promise.all([build?.stop(), deploy?.stop()]);
    await t?.cleanup();
  });

  it('rq --help names undepend and limits; the help of each command names its options', async () => {
    const r = await runRq(['--help']);
    expect(r.code).toBe(0);
    const words = r.out.slice(1).map((l) => l.trim().split(/\s+/)[0]);
    expect(words).toEqual(expect.arrayContaining(['undepend', 'limits']));
    const help = async (cmd: string) => (await runRq([cmd, '--help'])).out.map((l) => l.trim().split(/\s{2,}/)[0]);
    expect(await help('sendmesg')).toEqual(
      expect.arrayContaining(['--depends <queue>/<id>', '--depends_fail fail|run|wait', '--limit KEY', '--limit_concurrency N']),
    );
    expect(await help('undepend')).toEqual(expect.arrayContaining(['--msg_id FULLID', '--depends <queue>/<id>,…', '--all']));
    expect(await help('limits')).toEqual(expect.arrayContaining(['--key KEY', '--json']));
    expect(await help('waiting')).toEqual(expect.arrayContaining(['--reason REASON']));
  });

  it('a dependent waits in the que, listed by waiting, until its dependency is done; then it runs', async () => {
    const dep = await held('done');
    // A short ref and a full id of this host name the same message: one dependency.
    const a = await send('deploy', '--param1', 'done', '--depends', `${refOf(dep)},${dep}`);
    expect(await message(dep)).toMatchObject({ state: 'que', dependents: [refOf(a)] });
    expect(await message(a)).toMatchObject({ state: 'que', depends: [refOf(dep)], waiting: { reason: 'dependencies', waiting_on: [refOf(dep)] } });
    const line = `${refOf(a)} dependencies on ${refOf(dep)}`;
    expect(await rq(['waiting', '--queue', 'deploy'])).toEqual({ code: 0, out: ['ok 1', line], err: [] });
    expect(await rq(['waiting', '--queue', 'deploy', '--reason', 'dependencies'])).toEqual({ code: 0, out: ['ok 1', line], err: [] });
    expect(await rq(['waiting', '--queue', 'deploy', '--reason', 'delayed'])).toEqual({ code: 0, out: ['ok 0'], err: [] });
    const j = await rq(['waiting', '--queue', 'deploy', '--json']);
    expect(JSON.parse(j.out[0])).toEqual([{ msg_id: shortId(a), reason: 'dependencies', waiting_on: [refOf(dep)] }]);
    expect(await rq(['state', '--msg_id', a])).toEqual({ code: 0, out: ['ok que'], err: [] });

    await runNow(dep);
    expect(await finished(dep)).toMatchObject({ state: 'done' });
    expect(await finished(a)).toMatchObject({ state: 'done', depends_done: { [refOf(dep)]: expect.stringMatching(/^done/) } });
    // It started after its dependency had finished.
    const depEnd = Date.parse((await history(dep)).find((e) => e.from === 'run' && e.to === 'done').at);
    const aStart = Date.parse((await history(a)).find((e) => e.from === 'que' && e.to === 'run').at);
    expect(aStart).toBeGreaterThanOrEqual(depEnd);
    expect(await rq(['waiting', '--queue', 'deploy'])).toEqual({ code: 0, out: ['ok 0'], err: [] });
  });

  it('prepmesg --depends: the prepared message waits from its commit', async () => {
    const dep = await held('done');
    const r = await rq(['prepmesg', '--dest', 'deploy', '--param1', 'done', '--depends', refOf(dep)]);
    expect(r.code, r.out.join('\n')).toBe(0);
    const p = r.out[0].slice(3);
    expect(await rq(['commitmesg', '--msg_id', p])).toEqual({ code: 0, out: ['ok msg commited'], err: [] });
    expect(await message(p)).toMatchObject({ state: 'que', waiting: { reason: 'dependencies', waiting_on: [refOf(dep)] } });
    await runNow(dep);
    expect(await finished(p)).toMatchObject({ state: 'done' });
  });

  it('--depends_fail: fail (default) ends the dependent in err, run runs it, wait keeps it waiting until undepend', async () => {
    const dep = await held('err');
    const hard = await send('deploy', '--param1', 'done', '--depends', refOf(dep));
    const soft = await send('deploy', '--param1', 'done', '--depends', refOf(dep), '--depends_fail', 'run');
    const patient = await send('deploy', '--param1', 'done', '--depends', refOf(dep), '--depends_fail', 'wait');
    expect(await message(soft)).toMatchObject({ depends_fail: 'run' });

    await runNow(dep);
    expect(await finished(dep)).toMatchObject({ state: 'err' });
    expect(await finished(hard)).toMatchObject({ state: 'err', outcome: 'dependency_failed' });
    expect(await rq(['statusmesg', '--msg_id', hard])).toEqual({ code: 0, out: [`ok err - DEPENDENCY FAILED - ${refOf(dep)} is err (failed)`], err: [] });
    expect(await finished(soft)).toMatchObject({ state: 'done' });
    // wait: still waiting on the failed dependency once its failure is recorded.
    await waitFor(async () => (await message(patient)).depends_done?.[refOf(dep)] !== undefined, 'the failure to reach the patient dependent');
    expect(await message(patient)).toMatchObject({ state: 'que', waiting: { reason: 'dependencies', waiting_on: [refOf(dep)] } });
    expect(await rq(['waiting', '--queue', 'deploy', '--reason', 'dependencies'])).toEqual({
      code: 0,
      out: ['ok 1', `${refOf(patient)} dependencies on ${refOf(dep)}`],
      err: [],
    });

    expect(await rq(['undepend', '--msg_id', patient, '--all'])).toEqual({ code: 0, out: ['ok none'], err: [] });
    expect(await finished(patient)).toMatchObject({ state: 'done' });
  });

  it('undepend --depends drops some refs (durably, in depends) and prints the rest; --all the rest; then it runs', async () => {
    const [d1, d2, d3] = [await held('done'), await held('done'), await held('done')];
    const a = await send('deploy', '--param1', 'done', '--depends', [d1, d2, d3].map(refOf).join(','));
    expect(await rq(['undepend', '--msg_id', a, '--depends', refOf(d2)])).toEqual({ code: 0, out: [`ok ${refOf(d1)},${refOf(d3)}`], err: [] });
    // A full id of this host names a ref too.
    expect(await rq(['undepend', '--msg_id', refOf(a), '--depends', d3])).toEqual({ code: 0, out: [`ok ${refOf(d1)}`], err: [] });
    expect(await message(a)).toMatchObject({ state: 'que', depends: [refOf(d1)], waiting: { reason: 'dependencies', waiting_on: [refOf(d1)] } });
    expect(await rq(['undepend', '--msg_id', a, '--all'])).toEqual({ code: 0, out: ['ok none'], err: [] });
    const m = await finished(a);
    expect(m).toMatchObject({ state: 'done' });
    expect(m.depends).toBeUndefined();
    // Its dependencies were never run.
    for (const d of [d1, d2, d3]) expect(await rq(['state', '--msg_id', d])).toEqual({ code: 0, out: ['ok que'], err: [] });

    // No longer waiting, or no such message: the queue's refusal on stdout, exit 1.
    expect(await rq(['undepend', '--msg_id', a, '--all'])).toEqual({ code: 1, out: ['fail msg is not waiting on dependencies'], err: [] });
    expect(await rq(['undepend', '--msg_id', d1, '--depends', refOf(d2)])).toEqual({ code: 1, out: ['fail msg is not waiting on dependencies'], err: [] });
    expect(await rq(['undepend', '--msg_id', `deploy/${NO_MSG}`, '--all'])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
  });

  it('refuses bad --depends and --depends_fail before sending, or as the queue refuses them: exit 1, one line, nothing created', async () => {
    const dep = await held('done');
    const before = await messages('deploy');
    const refused: [string[], RegExp][] = [
      [['--depends'], /^rq: --depends: expected a value \(--depends <queue>\/<id> or --depends=<queue>\/<id>\), received no value$/],
      [['--depends', 'x'], new RegExp(`^rq: --depends\\[0\\]: expected ${REF_TEXT}, received "x"$`)],
      [['--depends', `${refOf(dep)},build/nonsense`], new RegExp(`^rq: --depends\\[1\\]: expected ${REF_TEXT}, received "build/nonsense"$`)],
      [
        ['--depends', Array.from({ length: 1001 }, (_, i) => `build/20200101.0000.00.000.${i + 1}`).join(',')],
        /^rq: --depends: expected at most 1000 refs, received 1001$/,
      ],
      [['--depends_fail'], /^rq: --depends_fail: expected a value \(--depends_fail fail\|run\|wait or --depends_fail=fail\|run\|wait\), received no value$/],
      [['--depends', refOf(dep), '--depends_fail', 'skip'], /^rq: --depends_fail: expected one of fail, run, wait, received "skip"$/],
    ];
    for (const [args, text] of refused) expectOneLineError(await rq(['sendmesg', '--dest', 'deploy', '--param1', 'done', ...args]), text, 2);

    // What only the queue knows: which queues and messages exist, and this host's full ids.
    const byQueue: [string, string][] = [
      [`nosuch/${shortId(dep)}`, 'fail depends[0]: queue nosuch does not exist'],
      [`${refOf(dep)},build/${NO_MSG}`, `fail depends[1]: no message build/${NO_MSG}`],
      [
        `http://elsewhere:3333/q/build/${shortId(dep)}`,
        `fail depends[0]: only messages of this host can be depended on (or of another host of its fleet; config.json names none), received http://elsewhere:3333/q/build/${shortId(dep)}`,
      ],
    ];
    for (const [refs, line] of byQueue)
      expect(await rq(['sendmesg', '--dest', 'deploy', '--param1', 'done', '--depends', refs])).toEqual({ code: 1, out: [line], err: [] });

    expect(await messages('deploy')).toEqual(before);
    expect(await message(dep)).not.toHaveProperty('dependents');
  });

  it('refuses bad undepend options before anything is sent: exit 1, one line, the message still waits on every ref', async () => {
    const [d1, d2] = [await held('done'), await held('done')];
    const a = await send('deploy', '--param1', 'done', '--depends', `${refOf(d1)},${refOf(d2)}`);
    const refused: [string[], RegExp][] = [
      [['--msg_id', a], /^rq: --depends or --all: expected one of them, received neither$/],
      [['--msg_id', a, '--all', '--depends', refOf(d1)], /^rq: --depends or --all: expected one of them, received both$/],
      [['--msg_id', a, '--depends'], /^rq: --depends: expected a comma-separated list of message refs \(<queue>\/<id>\), received no value$/],
      [['--msg_id', a, '--depends', ','], /^rq: --depends: expected 1 to 1000 message refs, received ","$/],
      [['--msg_id', a, '--depends', `${refOf(d1)},x`], new RegExp(`^rq: --depends\\[1\\]: expected ${REF_TEXT}, received "x"$`)],
      [['--msg_id', a, '--all=yes'], /^rq: --all: expected no value \(a flag\), received "yes"$/],
      [['--all'], /^rq: --msg_id: expected a full message id .*, received nothing$/],
      [['--msg_id', 'nonsense', '--all'], /^rq: --msg_id: expected a full message id .*, received "nonsense"$/],
      [['--msg_id', `nosuch/${NO_MSG}`, '--all'], /^rq: queue not found: nosuch$/],
    ];
    for (const [args, text] of refused) expectOneLineError(await rq(['undepend', ...args]), text, /queue not found/.test(text.source) ? 1 : 2);
    expect(await message(a)).toMatchObject({
      state: 'que',
      depends: [refOf(d1), refOf(d2)],
      waiting: { reason: 'dependencies', waiting_on: [refOf(d1), refOf(d2)] },
    });
    expect(await rq(['cancel', '--msg_id', a])).toEqual({ code: 0, out: ['ok msg cancelled'], err: [] });
  });

  it('without rq-mgr: rq limits says so in one line, and a message with a limit is refused by the queue', async () => {
    expectOneLineError(await rq(['limits']), /^rq: rq-mgr does not answer, and it holds the limits table \(no reply from .*queuemgr\.sock: .*\)$/, 3);
    const before = await messages('deploy');
    const r = await rq(['sendmesg', '--dest', 'deploy', '--param1', 'done', '--limit', 'reports', '--limit_concurrency', '2']);
    expect(r.code).toBe(1);
    expect(r.err).toEqual([]);
    expect(r.out).toHaveLength(1);
    expect(r.out[0]).toMatch(/^fail limit: the limits table \(rq-mgr\) did not answer \(.*\)$/);
    expect(await messages('deploy')).toEqual(before);
  });
});
