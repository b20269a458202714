// History (rq-beyond §B14): the run lines carry pid, attempt and exit; the §B14 example reproduced through the socket and `rq history`.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT, QueueProc, type TestRoot, addQueue, makeRoot } from '../../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'hist', { extra: { kill_grace: 0.3 } });
  q = await QueueProc.start(t.root, 'hist');
});
afterAll(async () => {
  await q?.stop();
  await t?.cleanup();
});

describe('history of a run that times out, is retried and succeeds', () => {
  it('matches the §B14 example line for line, and rq history prints it', async () => {
    const id = await q.send({ param1: 'hangs_first', timeout: 0.4, max_retries: 3, backoff_base: 1, retry_jitter: 0 });
    await q.waitState(id, ['done'], 15_000);
    const [status, h] = await q.cmd('get_history', { msg_id: id });
    expect(status).toBe('ok');
    expect(h.map((l: { event?: string; from?: string | null; to?: string }) => l.event ?? `${l.from}→${l.to}`)).toEqual([
      'null→que',
      'que→run',
      'timeout',
      'run→que',
      'que→run',
      'run→done',
    ]);
    const [create, run1, timeout, retry, run2, done] = h;
    expect(create).toEqual({ at: expect.any(String), from: null, to: 'que', actor: 'create' });
    expect(run1).toEqual({ at: expect.any(String), from: 'que', to: 'run', actor: 'dispatcher', pid: expect.any(Number), attempt: 1 });
    expect(timeout).toEqual({ at: expect.any(String), event: 'timeout', after_s: expect.any(Number) });
    expect(timeout.after_s).toBeGreaterThanOrEqual(0.4);
    expect(retry).toMatchObject({ from: 'run', to: 'que', actor: 'retry', failure: 'timeout', retry: 1, of: 3, delay_s: 1 });
    expect(retry.exit).toEqual({ code: null, signal: 'SIGTERM', wall_ms: expect.any(Number) });
    expect(retry.exit.wall_ms).toBeGreaterThanOrEqual(400);
    // Every run's accounting: from the reap's rusage on a queue without limits. A script smaller than the queue
    // process has no peak memory there (the kernel would give the queue's as its own: run-usage.ts).
    expect(retry.usage).toEqual({
      cpu_user_ms: expect.any(Number),
      cpu_system_ms: expect.any(Number),
      io_read_bytes: expect.any(Number),
      io_write_bytes: expect.any(Number),
      source: 'rusage',
    });
    expect(retry.reason).toMatch(/^TIMEOUT - killed after 0\.\d+s \(timeout 0\.4s\)$/);
    expect(run2).toMatchObject({ from: 'que', to: 'run', actor: 'dispatcher', attempt: 2 });
    expect(run2.pid).not.toBe(run1.pid);
    expect(done).toMatchObject({ from: 'run', to: 'done', actor: 'script', exit: { code: 0, signal: null }, reason: expect.stringMatching(/^exit 0/) });
    // The retry waited its backoff: the second run starts a second after the first one ended. Its end is
    // after its timeout line (the kill comes first); the run line is stamped after the spawn and the retry
    // line once the msg is durable, both later than what they mark by as much as a loaded machine delays them.
    expect(Date.parse(run2.at) - Date.parse(timeout.at)).toBeGreaterThanOrEqual(1000 - 1);

    const { stdout } = await promisify(execFile)(path.join(PROJECT, 'bin', 'rq'), ['history', '--msg_id', `hist/${id}`, '--root', t.root]);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('ok 6');
    expect(lines[2]).toMatch(new RegExp(`^\\S+Z que→run dispatcher pid ${run1.pid}, attempt 1$`));
    expect(lines[4]).toMatch(
      / run→que retry failure: timeout, retry 1 of 3 in 1s, killed by SIGTERM after \d+\.\d+s, used \d+\.\d+s CPU \(user \d+\.\d+s, system \d+\.\d+s\)(, IO read [\w. ]+, written [\w. ]+)? - TIMEOUT - killed after/,
    );
  });
});
