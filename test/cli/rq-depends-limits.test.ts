// rq's dependency and limit options and commands against real processes (rq-beyond §B8, §B12, §B1.10,
// §B1.12): sendmesg/prepmesg --depends and --depends_fail (a dependent waits for its dependency; the
// three failure policies), undepend --depends and --all, waiting's dependency and limit lines; with a
// real rq-mgr: sendmesg --limit/--limit_concurrency, rq limits (slots in use, waiters, orphans), and
// the refusals of bad input (exit 1, one line, nothing created or changed).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { killLeftoverGroups, newPidInFile, pidInFile } from '../helpers/process-groups.js';
import { type Run, expectOneLineError, runRq } from '../helpers/rq-cli.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';

const groups = killLeftoverGroups();
const shortId = (fullId: string) => fullId.split('/').pop()!;
/** `<queue>/<id>` of a full id. */
const refOf = (fullId: string) => fullId.split('/').slice(-2).join('/');
const later = () => String(Math.floor(Date.now() / 1000) + 3600);
const NO_MSG = '20200101.0000.00.000.1';
const REF_TEXT = 'a message ref such as test/20261121\\.1643\\.46\\.613\\.2164022';

/** bin/rq on `root`; `send` returns the full id it printed. */
function cli(root: () => TestRoot) {
  const rq = (args: string[]): Promise<Run> => runRq(args, { root: root().root });
  const send = async (dest: string, ...args: string[]): Promise<string> => {
    const r = await rq(['sendmesg', '--dest', dest, ...args]);
    expect(r.code, [...r.out, ...r.err].join('\n')).toBe(0);
    return new RegExp(`^ok (http://127\\.0\\.0\\.1:${root().port}/q/${dest}/\\d{8}\\.\\d{4}\\.\\d{2}\\.\\d{3}\\.\\d+)$`).exec(r.out[0])![1];
  };
  /** Every message dir of a queue, in any state (done/ and relayed/ are hashed by date): a refusal adds none. */
  const messages = async (queue: string): Promise<string[]> => {
    const p = queuePaths(root().root, queue);
    const ids: string[] = [];
    for (const s of Object.values(p.state)) for (const f of await fs.readdir(s, { recursive: true })) if (/^\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/.test(path.basename(f))) ids.push(f);
    return ids.sort();
  };
  return { rq, send, messages };
}

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
    expect(await help('sendmesg')).toEqual(expect.arrayContaining(['--depends <queue>/<id>', '--depends_fail fail|run|wait', '--limit KEY', '--limit_concurrency N']));
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
    expect(await rq(['waiting', '--queue', 'deploy', '--reason', 'dependencies'])).toEqual({ code: 0, out: ['ok 1', `${refOf(patient)} dependencies on ${refOf(dep)}`], err: [] });

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
      [['--depends', Array.from({ length: 1001 }, (_, i) => `build/20200101.0000.00.000.${i + 1}`).join(',')], /^rq: --depends: expected at most 1000 refs, received 1001$/],
      [['--depends_fail'], /^rq: --depends_fail: expected a value \(--depends_fail fail\|run\|wait or --depends_fail=fail\|run\|wait\), received no value$/],
      [['--depends', refOf(dep), '--depends_fail', 'skip'], /^rq: --depends_fail: expected one of fail, run, wait, received "skip"$/],
    ];
    for (const [args, text] of refused) expectOneLineError(await rq(['sendmesg', '--dest', 'deploy', '--param1', 'done', ...args]), text, 2);

    // What only the queue knows: which queues and messages exist, and this host's full ids.
    const byQueue: [string, string][] = [
      [`nosuch/${shortId(dep)}`, 'fail depends[0]: queue nosuch does not exist'],
      [`${refOf(dep)},build/${NO_MSG}`, `fail depends[1]: no message build/${NO_MSG}`],
      [`http://elsewhere:3333/q/build/${shortId(dep)}`, `fail depends[0]: only messages of this host can be depended on, received http://elsewhere:3333/q/build/${shortId(dep)}`],
    ];
    for (const [refs, line] of byQueue) expect(await rq(['sendmesg', '--dest', 'deploy', '--param1', 'done', '--depends', refs])).toEqual({ code: 1, out: [line], err: [] });

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
    expect(await message(a)).toMatchObject({ state: 'que', depends: [refOf(d1), refOf(d2)], waiting: { reason: 'dependencies', waiting_on: [refOf(d1), refOf(d2)] } });
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

describe('concurrency limits from the command line, with a real rq-mgr (rq-beyond §B12)', () => {
  let t: TestRoot;
  let mgr: MgrProc;
  const { rq, send, messages } = cli(() => t);
  const pidFile = (name: string) => path.join(t.root, 'pids', `${name}.pid`);

  /** A `forever` script holding a slot of `limit` on `dest`, once it runs: its full id and process group. */
  async function holder(dest: string, name: string, ...args: string[]): Promise<{ id: string; pid: number }> {
    const id = await send(dest, '--param1', 'forever', '--param2', pidFile(name), ...args);
    const pid = await pidInFile(pidFile(name));
    groups.push(pid);
    return { id, pid };
  }

  /** Waits until `rq limits` prints exactly `lines` after its `ok <n>`. */
  async function limitsShow(args: string[], lines: string[]): Promise<void> {
    let last: Run | undefined;
    try {
      await waitFor(async () => {
        last = await rq(['limits', ...args]);
        return JSON.stringify(last.out) === JSON.stringify([`ok ${lines.length}`, ...lines]);
      }, `rq limits ${args.join(' ')} to print ${lines.join(' | ')}`);
    } catch (err) {
      throw new Error(`${(err as Error).message} (last: ${JSON.stringify(last)})`, { cause: err });
    }
    expect(last).toEqual({ code: 0, out: [`ok ${lines.length}`, ...lines], err: [] });
  }

  const finish = (queue: string, fullId: string) =>
    waitFor(async () => {
      const r = await mgr.q(queue, 'wait_message', { msg_id: shortId(fullId), timeout: 5 });
      return r[0] === 'ok' ? r[1] : false;
    }, `${fullId} to finish`, 20_000);

  beforeAll(async () => {
    t = await makeRoot();
    await fs.mkdir(path.join(t.root, 'pids'));
    await fs.writeFile(rootPaths(t.root).limitsFile, JSON.stringify({ reports: 1 }));
    for (const q of ['lim1', 'lim2', 'orph']) await addQueue(t.root, q, { num_workers: 2 });
    mgr = await MgrProc.start(t.root);
    for (const q of ['lim1', 'lim2', 'orph']) await mgr.waitQueueUp(q);
  });

  afterAll(async () => {
    await mgr?.stop();
    await t?.cleanup();
  });

  it('rq limits: the slots in use of a config key and its waiters; waiting shows their place; --key, --json; the key is gone once free', async () => {
    expect(await rq(['limits'])).toEqual({ code: 0, out: ['ok 0'], err: [] });
    const h = await holder('lim1', 'reports-holder', '--limit', 'reports');
    const w1 = await send('lim2', '--param1', 'done', '--limit', 'reports');
    await limitsShow([], ['reports 1/1 waiting 1']);
    const w2 = await send('lim1', '--param1', 'done', '--limit', 'reports');
    await limitsShow([], ['reports 1/1 waiting 2']);
    expect(await rq(['limits', '--key', 'reports'])).toEqual({ code: 0, out: ['ok 1', 'reports 1/1 waiting 2'], err: [] });
    expect(await rq(['limits', '--key', 'nosuch'])).toEqual({ code: 0, out: ['ok 0'], err: [] });

    const j = await rq(['limits', '--key', 'reports', '--json']);
    expect(j.code).toBe(0);
    expect(j.out).toHaveLength(1);
    expect(JSON.parse(j.out[0])).toEqual({
      reports: {
        concurrency: 1,
        source: 'config',
        holders: [{ ref: refOf(h.id), queue: 'lim1', since: expect.any(Number), granted_at: expect.any(Number) }],
        waiting: [
          { ref: refOf(w1), queue: 'lim2', since: expect.any(Number), position: 1 },
          { ref: refOf(w2), queue: 'lim1', since: expect.any(Number), position: 2 },
        ],
      },
    });
    expect(await rq(['waiting', '--queue', 'lim2'])).toEqual({ code: 0, out: ['ok 1', `${refOf(w1)} limit reports position 1`], err: [] });
    expect(await rq(['waiting', '--queue', 'lim1', '--reason', 'limit'])).toEqual({ code: 0, out: ['ok 1', `${refOf(w2)} limit reports position 2`], err: [] });
    // In waiting, --limit is still a page size.
    expect(await rq(['waiting', '--queue', 'lim1', '--limit', '1'])).toEqual({ code: 0, out: ['ok 1', `${refOf(w2)} limit reports position 2`], err: [] });

    expect((await rq(['cancel', '--msg_id', h.id, '--wait=20'])).out).toEqual(['ok msg cancelling', expect.stringMatching(/^ok err - CANCELLED/)]);
    expect(await finish('lim2', w1)).toMatchObject({ state: 'done' });
    expect(await finish('lim1', w2)).toMatchObject({ state: 'done' });
    await limitsShow([], []);
  });

  it('a key of the message (a template with --limit_concurrency): its expansion is listed; a conflicting or missing concurrency is refused, nothing created', async () => {
    const h = await holder('lim2', 'api-holder', '--param3', 'acme', '--limit', 'api:{param3}', '--limit_concurrency', '1');
    await limitsShow(['--key', 'api:acme'], ['api:acme 1/1 waiting 0']);
    const j = JSON.parse((await rq(['limits', '--key', 'api:acme', '--json'])).out[0]);
    expect(j['api:acme']).toMatchObject({ concurrency: 1, source: 'message' });

    const before = [await messages('lim1'), await messages('lim2')];
    const conflict = await rq(['sendmesg', '--dest', 'lim1', '--param1', 'done', '--param3', 'acme', '--limit', 'api:{param3}', '--limit_concurrency', '2']);
    expect(conflict.code).toBe(1);
    expect(conflict.err).toEqual([]);
    expect(conflict.out).toHaveLength(1);
    expect(conflict.out[0]).toMatch(/^fail limit_concurrency: key "api:acme" has concurrency 1 \(.+\), received 2$/);
    expect(await rq(['sendmesg', '--dest', 'lim1', '--param1', 'done', '--limit', 'nokey'])).toEqual({
      code: 1,
      out: ['fail limit: key "nokey" has no concurrency: add it to config/limits.json or send limit_concurrency'],
      err: [],
    });
    expect(await rq(['sendmesg', '--dest', 'lim1', '--param1', 'done', '--limit', 'reports', '--limit_concurrency', '3'])).toEqual({
      code: 1,
      out: ['fail limit_concurrency: key "reports" has concurrency 1 (config/limits.json), received 3'],
      err: [],
    });
    expect([await messages('lim1'), await messages('lim2')]).toEqual(before);

    expect((await rq(['cancel', '--msg_id', h.id, '--wait=20'])).code).toBe(0);
    await limitsShow(['--key', 'api:acme'], []);
  });

  it('refuses bad --limit, --limit_concurrency and limits options before anything is sent: exit 1, one line, nothing created', async () => {
    const before = await messages('lim1');
    const refused: [string[], RegExp][] = [
      [['--limit'], /^rq: --limit: expected a value \(--limit KEY or --limit=KEY\), received no value$/],
      [['--limit', ''], /^rq: --limit: expected a key of 1-256 characters without control characters, received ""$/],
      [['--limit', 'x'.repeat(257)], /^rq: --limit: expected a key of 1-256 characters without control characters, received "x{20,}/],
      [['--limit', 'api:{param5}'], /^rq: --limit: the template names an unknown field \{param5\} \(use \{param1\}\.\.\{param4\} or \{queue\}\)$/],
      [['--limit', 'reports', '--limit_concurrency'], /^rq: --limit_concurrency: expected a value \(--limit_concurrency N or --limit_concurrency=N\), received no value$/],
      [['--limit', 'reports', '--limit_concurrency', '0'], /^rq: --limit_concurrency: expected a whole number 1-10000, received "0"$/],
      [['--limit', 'reports', '--limit_concurrency', '10001'], /^rq: --limit_concurrency: expected a whole number 1-10000, received "10001"$/],
      [['--limit', 'reports', '--limit_concurrency', 'two'], /^rq: --limit_concurrency: expected a whole number 1-10000, received "two"$/],
    ];
    for (const [args, text] of refused) expectOneLineError(await rq(['sendmesg', '--dest', 'lim1', '--param1', 'done', ...args]), text, 2);
    expect(await messages('lim1')).toEqual(before);

    const key = /^rq: --key: expected a limit key of 1-256 characters without control characters, received /;
    expectOneLineError(await rq(['limits', '--key']), new RegExp(`${key.source}no value$`), 2);
    expectOneLineError(await rq(['limits', '--key', '']), new RegExp(`${key.source}""$`), 2);
    expectOneLineError(await rq(['limits', '--key', 'a\tb']), new RegExp(`${key.source}"a\\\\tb"$`), 2);
    expectOneLineError(await rq(['limits', '--json=yes']), /^rq: --json: expected no value \(a flag\), received "yes"$/, 2);
  });

  it('a queue process killed -9 leaves its slot counted and marked orphaned until its next incarnation has killed the script', async () => {
    const configFile = queuePaths(t.root, 'orph').configFile;
    const config = await fs.readFile(configFile, 'utf8');
    const h = await holder('orph', 'orphan', '--limit', 'solo', '--limit_concurrency', '1');
    await limitsShow(['--key', 'solo'], ['solo 1/1 waiting 0']);
    // Restarts fail while its config is unreadable: the slot stays orphaned for as long as that lasts.
    await fs.writeFile(configFile, '{ not json');
    process.kill(await mgr.waitQueueUp('orph'), 'SIGKILL');
    await limitsShow(['--key', 'solo'], ['solo 1/1 waiting 0 (1 orphaned)']);
    await limitsShow([], ['solo 1/1 waiting 0 (1 orphaned)']);

    // Repaired: the next incarnation kills the leftover script, frees the slot, and runs the message again (at least once).
    await fs.writeFile(configFile, config);
    const again = await newPidInFile(pidFile('orphan'), h.pid, 'the message to run again', 20_000);
    groups.push(again);
    await limitsShow(['--key', 'solo'], ['solo 1/1 waiting 0']);
    expect((await rq(['cancel', '--msg_id', h.id, '--wait=20'])).code).toBe(0);
    await limitsShow([], []);
  });
});
