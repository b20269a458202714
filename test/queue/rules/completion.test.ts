// Completion rules (spec §3.3), resend and max_count, in bash, python and node scripts.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueProc, type TestRoot, VERBS_NODE, VERBS_PY, VERBS_SH, addQueue, makeRoot } from '../../helpers/rq-root.js';
import { historyFile } from '../../helpers/history.js';

let t: TestRoot;
const procs: Record<string, QueueProc> = {};

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'bash', { script: VERBS_SH, num_workers: 4 });
  await addQueue(t.root, 'python', { script: VERBS_PY, num_workers: 4 });
  await addQueue(t.root, 'node', { script: VERBS_NODE, num_workers: 4 });
  procs.bash = await QueueProc.start(t.root, 'bash');
  procs.python = await QueueProc.start(t.root, 'python');
  procs.node = await QueueProc.start(t.root, 'node');
});
afterAll(async () => {
  await Promise.all(Object.values(procs).map((p) => p.stop()));
  await t?.cleanup();
});

/** The states a message moved to, from its history file (the create line is implied by the id, not stored). */
const historyMoves = async (dir: string): Promise<string[]> => (await historyFile(dir)).map((l) => l.to ?? '');

const cases: [string, string, RegExp | string][] = [
  ['done', 'done', 'done - done sleeping'],
  ['err', 'err', 'err - by design'],
  ['fails', 'err', 'err - old spelling'],
  ['done_exit1', 'err', /^err - PROCESS EXITED IMPROPERLY - MOVING TO ERR - Completion was done but exit status was pid \d+ exit 1$/],
  ['err_exit1', 'err', 'err - and exit'],
  ['nothing', 'err', 'err'],
  ['fail_word', 'err', 'err - not a completion keyword'],
  ['progress', 'done', 'done - after progress'],
  ['relayed', 'relayed', 'relayed - http://127.0.0.1:1/q/x/1'],
  ['split_line', 'done', 'done - split across writes'],
];

describe.each(['bash', 'python', 'node'])('%s script', (lang) => {
  it.each(cases)('%s ends in %s with its status', async (mode, state, status) => {
    const q = procs[lang];
    const id = await q.send({ param1: mode });
    const m = await q.waitState(id, ['done', 'err', 'relayed']);
    expect(m.state).toBe(state);
    if (typeof status === 'string') expect(m.status).toBe(status);
    else expect(m.status).toMatch(status);
  });

  // Spec §3.4: the resend line already counted, but only an exit 0 honours it.
  it.each([
    ['resend_exit3', 'exit 3'],
    ['resend_kill9', 'SIGKILL (signal 9)'],
  ])('%s: a resend followed by %s ends in err, never back in que', async (mode, ending) => {
    const q = procs[lang];
    const id = await q.send({ param1: mode });
    const m = await q.waitState(id, ['done', 'err', 'relayed']);
    const dir = path.join(t.root, m.path);
    const pid = /^\n(\d+) - /.exec(await fs.readFile(path.join(dir, 'job', 'stdio.log'), 'utf8'))?.[1];
    expect(m.state).toBe('err');
    expect(m.status).toBe(`err - PROCESS EXITED IMPROPERLY - MOVING TO ERR - Completion was resend but exit status was pid ${pid} ${ending}`);
    expect(m.count).toBe(1);
    expect(await historyMoves(dir)).toEqual(['run', 'err']);
  });

  it('resend once: back to que with count 1 and a later due, then done', async () => {
    const q = procs[lang];
    const t0 = Math.floor(Date.now() / 1000);
    const id = await q.send({ param1: 'resend1' });
    await q.waitState(id, ['que', 'done'], 5000);
    const m = await q.waitState(id, ['done'], 10_000);
    expect(m.count).toBe(1);
    expect(m.status).toBe('done - resent once');
    expect(m.due).toBeGreaterThanOrEqual(t0 + 1);
    const dir = path.join(t.root, m.path);
    await expect(fs.stat(path.join(dir, 'resend'))).resolves.toBeTruthy();
    expect(await historyMoves(dir)).toEqual(['run', 'que', 'run', 'done']);
  });

  it('resend until a count, and max_count ends in err with the classic text', async () => {
    const q = procs[lang];
    const ok = await q.send({ param1: 'resend_until', param2: '3' });
    expect((await q.waitState(ok, ['done'])).count).toBe(3);
    const capped = await q.send({ param1: 'resend_always', count: 2, max_count: 3 });
    const m = await q.waitState(capped, ['err']);
    expect(m.count).toBe(3);
    expect(m.status).toBe('err - HIT MAX RESEND COUNT - MOVING TO ERR');
  });
});

describe('stdio.log', () => {
  it('gets one header line per run naming the pid and the real script, plus the script output', async () => {
    const q = procs.bash;
    const id = await q.send({ param1: 'ansi' });
    const m = await q.waitState(id, ['done']);
    const log = await fs.readFile(path.join(t.root, m.path, 'job', 'stdio.log'), 'utf8');
    // The start gate prints the header before the script runs, with the pid the script keeps.
    const headers = [...log.matchAll(/\n(\d+) - \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{4} - RQ START - (\S+)\n/g)];
    expect(headers).toHaveLength(1);
    expect(headers[0].index).toBe(0);
    expect(headers[0][2]).toBe(VERBS_SH);
    const history = (await fs.readFile(path.join(t.root, m.path, 'history'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(history.find((h) => h.to === 'done').reason).toBe('exit 0');
    expect(log).toContain('\u001b[31mred\u001b[0m');
    expect(log).toContain('<script>alert(1)</script>');
  });
});
