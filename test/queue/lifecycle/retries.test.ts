// Retries with backoff, fatal, and the retry verb (rq-beyond §B3), end to end with real queue processes and bash, python and node scripts.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueProc, type TestRoot, VERBS_NODE, VERBS_PY, VERBS_SH, addQueue, makeRoot } from '../../helpers/rq-root.js';
import { historyFile } from '../../helpers/history.js';

let t: TestRoot;
const procs: Record<string, QueueProc> = {};
const FAST = { backoff_base: 0.1, min_retry_delay: 0, retry_jitter: 0 };

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'bash', { script: VERBS_SH, num_workers: 4 });
  await addQueue(t.root, 'python', { script: VERBS_PY, num_workers: 2 });
  await addQueue(t.root, 'node', { script: VERBS_NODE, num_workers: 2 });
  await addQueue(t.root, 'defaults', { extra: { retry: { max_retries: 2, ...FAST } } });
  for (const q of ['bash', 'python', 'node', 'defaults']) procs[q] = await QueueProc.start(t.root, q);
});
afterAll(async () => {
  await Promise.all(Object.values(procs).map((p) => p.stop()));
  await t?.cleanup();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Line = Record<string, any>;

const history = (m: { path: string }): Promise<Line[]> => historyFile(path.join(t.root, m.path));

async function stdio(m: { path: string }): Promise<string> {
  return fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8');
}

describe.each(['bash', 'python', 'node'])('%s script', (lang) => {
  it('a flaky script that succeeds on its third try: two retries with delays 0.1 s and 0.2 s, then done', async () => {
    const q = procs[lang];
    const id = await q.send({ param1: 'flaky', param2: '3', max_retries: 5, ...FAST });
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.state).toBe('done');
    expect(m.status).toBe('done - on attempt 3');
    expect(m.failures).toBe(2);
    expect(m.last_failure).toMatchObject({ kind: 'err', text: 'attempt 2 failed', code: 0 });
    expect(m.outcome).toBeUndefined();
    const h = await history(m);
    const retries = h.filter((l) => l.actor === 'retry');
    expect(retries.map((l) => [l.from, l.to, l.failure, l.retry, l.of, l.delay_s, l.reason])).toEqual([
      ['run', 'que', 'err', 1, 5, 0.1, 'attempt 1 failed'],
      ['run', 'que', 'err', 2, 5, 0.2, 'attempt 2 failed'],
    ]);
    // No retry starts before its due.
    for (const r of retries) {
      const next = h[h.indexOf(r) + 1];
      expect(next).toMatchObject({ from: 'que', to: 'run' });
      expect(Date.parse(next.at)).toBeGreaterThanOrEqual(Math.floor(r.due * 1000));
    }
    expect((await stdio(m)).match(/attempt=\d max=\d last=.*/g)).toEqual([
      'attempt=1 max=5 last=',
      'attempt=2 max=5 last=attempt 1 failed',
      'attempt=3 max=5 last=attempt 2 failed',
    ]);
  });

  it('failing past max_retries ends in err, outcome exhausted, with the last failure in the status', async () => {
    const q = procs[lang];
    const id = await q.send({ param1: 'flaky', param2: '99', max_retries: 2, ...FAST });
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.state).toBe('err');
    expect(m.status).toBe('err - RETRIES EXHAUSTED (2) - attempt 3 failed');
    expect(m.outcome).toBe('exhausted');
    expect(m.failures).toBe(3);
    expect((await history(m)).filter((l) => l.to === 'run')).toHaveLength(3);
  });

  it('fatal ends the message at once, whatever its retry budget', async () => {
    const q = procs[lang];
    const id = await q.send({ param1: 'fatal', param2: 'input is corrupt', max_retries: 5, ...FAST });
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.state).toBe('err');
    expect(m.status).toBe('err - input is corrupt');
    expect(m.outcome).toBe('fatal');
    expect(m.last_failure).toMatchObject({ kind: 'fatal', text: 'input is corrupt' });
    expect((await history(m)).filter((l) => l.to === 'run')).toHaveLength(1);
  });

  it('retry N waits N seconds, counts against max_retries, and exhausts with its reason', async () => {
    const q = procs[lang];
    const id = await q.send({ param1: 'retry', param2: '0.3-upstream busy', max_retries: 1, ...FAST });
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.status).toBe('err - RETRIES EXHAUSTED (1) - upstream busy');
    expect(m.outcome).toBe('exhausted');
    const retry = (await history(m)).find((l) => l.actor === 'retry');
    expect(retry).toMatchObject({ failure: 'retry', retry: 1, of: 1, delay_s: 0.3, reason: 'upstream busy' });
  });
});

describe('retry rules', () => {
  it('a retry line without a budget ends as exhausted (0): a script that asks for retries needs max_retries', async () => {
    const q = procs.bash;
    const id = await q.send({ param1: 'retry', param2: '-try later' });
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.status).toBe('err - RETRIES EXHAUSTED (0) - try later');
    expect(m.outcome).toBe('exhausted');
  });

  it('a non-zero exit without err is a failure of kind exit, retried too', async () => {
    const q = procs.bash;
    const id = await q.send({ param1: 'done_exit1', max_retries: 1, ...FAST });
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.outcome).toBe('exhausted');
    expect(m.status).toMatch(/^err - RETRIES EXHAUSTED \(1\) - exit status 1 after the script reported done$/);
    expect(m.last_failure).toMatchObject({ kind: 'exit', code: 1 });
  });

  it("a failure's text in rq's words: exit status 3, not the classic text with an empty keyword; never a trailing dash; a classic message keeps spec 3.3's text", async () => {
    // Exits 3 having said nothing on fd 3, or only a bare `run` (a status of nothing).
    const script = path.join(t.root, 'exit3.sh');
    await fs.writeFile(script, '#!/bin/sh\n[ "$RQ_PARAM1" = quiet ] || printf \'run\\n\' >&3\nexit 3\n', { mode: 0o755 });
    await addQueue(t.root, 'exit3', { script });
    const q = await QueueProc.start(t.root, 'exit3');
    try {
      for (const param1 of ['quiet', 'bare_run']) {
        const m = await q.waitState(await q.send({ param1, max_retries: 1, ...FAST }), ['done', 'err']);
        expect(m.status, param1).toBe('err - RETRIES EXHAUSTED (1) - exit status 3');
        expect(m.last_failure, param1).toMatchObject({ kind: 'exit', code: 3, text: 'exit status 3' });
        const retried = (await history(m)).find((l) => l.actor === 'retry');
        expect(retried?.reason, param1).toBe('exit status 3');
      }
      const classic = await q.waitState(await q.send({ param1: 'quiet' }), ['done', 'err']);
      expect(classic.status).toMatch(/^err - PROCESS EXITED IMPROPERLY - MOVING TO ERR - Completion was {2}but exit status was pid \d+ exit 3$/);
    } finally {
      await q.stop();
    }
  });

  it('a clean exit without a completion line, retried: its text says so, not an empty status', async () => {
    const q = procs.bash;
    const m = await q.waitState(await q.send({ param1: 'nothing', max_retries: 1, ...FAST }), ['done', 'err']);
    expect(m.status).toBe('err - RETRIES EXHAUSTED (1) - exit status 0 without a completion line');
  });

  it('the queue config retry object is the default for messages that set nothing', async () => {
    const q = procs.defaults;
    const id = await q.send({ param1: 'flaky', param2: '3' });
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.state).toBe('done');
    expect(m.failures).toBe(2);
    expect(m.max_retries).toBeUndefined();
    expect((await stdio(m)).match(/attempt=\d max=\d/g)).toEqual(['attempt=1 max=2', 'attempt=2 max=2', 'attempt=3 max=2']);
  });

  it('a message field overrides the queue default (max_retries 0 on a retrying queue fails at once, classic)', async () => {
    const q = procs.defaults;
    const id = await q.send({ param1: 'flaky', param2: '3', max_retries: 0 });
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.status).toBe('err - attempt 1 failed');
    expect(m.outcome).toBeUndefined();
  });

  it('a classic message gets no new field or variable; its history gains only the run details every run has (§B14)', async () => {
    const q = procs.bash;
    const failed = await q.waitState(await q.send({ param1: 'err' }), ['err']);
    for (const f of ['failures', 'last_failure', 'outcome']) expect(failed).not.toHaveProperty(f);
    const env = await q.waitState(await q.send({ param1: 'env' }), ['done']);
    expect(await stdio(env)).not.toMatch(/^RQ_(ATTEMPT|MAX_RETRIES|LAST_FAILURE|TIMEOUT|DEADLINE|KILL_GRACE|HEARTBEAT_TIMEOUT)=/m);
    expect((await history(failed)).map((l) => Object.keys(l).sort().join())).toEqual(['actor,at,attempt,from,pid,to', 'actor,at,exit,from,reason,to,usage']);
  });
});

describe('bad input', () => {
  it.each([
    [{ max_retries: 'five' }, 'max_retries: expected a whole number 0-1000, received "five"'],
    [{ retries: -1 }, 'max_retries: expected a whole number 0-1000, received -1'],
    [{ backoff_base: 0 }, 'backoff_base: expected seconds > 0 and <= 86400, received 0'],
    [{ min_retry_delay: 60, max_retry_delay: 30 }, 'max_retry_delay: expected seconds >= min_retry_delay (60), received 30'],
    [{ retry_jitter: 2 }, 'retry_jitter: expected a number from 0 to 1, received 2'],
    [{ timeout: '1h' }, 'timeout: expected seconds > 0 and <= 2592000, received "1h"'],
    [{ heartbeat_timeout: 0.5 }, 'heartbeat_timeout: expected seconds >= 1 and <= 2592000, received 0.5'],
  ])('%j is refused with a text naming the field, and nothing is created', async (fields, text) => {
    const q = procs.bash;
    const before = await q.cmd('num_messages');
    expect(await q.cmd('create_message', { dest: 'bash', param1: 'done', ...fields })).toEqual(['fail', text]);
    expect(await q.cmd('num_messages')).toEqual(before);
  });
});
