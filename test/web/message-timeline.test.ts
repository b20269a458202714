// The message page's Timeline with a real queue: a run's end reads as "exit 3" or "killed by SIGKILL", a retry in words, the create as "created → que".
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pidInFile } from '../helpers/process-groups.js';
import { type WebRoot, send, startWebRoot, waitState } from './web-root.js';

let w: WebRoot;
beforeAll(async () => {
  w = await startWebRoot({ queues: { test: {} } });
}, 60_000);
afterAll(async () => w?.stop());

/** The Timeline's steps as the page shows them: step, actor, and the reason with its details, as text. */
async function timeline(id: string): Promise<string[][]> {
  const page = await (await fetch(`${w.base}/q/test/${id}`)).text();
  const section = page.slice(page.indexOf('<section class="card" id="timeline">'));
  const text = (s: string) =>
    s
      .replace(/<[^>]+>/g, '')
      .replace(/\s+/g, ' ')
      .trim();
  return [
    ...section.matchAll(/<span class="t-step">(.*?)<\/span><span class="t-actor">(.*?)<\/span><span class="t-reason">(.*?)<\/span><span class="t-after/g),
  ].map((m) => [text(m[1]), text(m[2]), text(m[3])]);
}

describe('the message page reads its history in words', () => {
  it('a script that exits 3: created → que, que → run, run → err with "exit 3"', async () => {
    const id = await send(w.base, 'test', { param1: 'err_exit1' });
    await waitState(w.base, 'test', id, ['err']);
    const steps = await timeline(id);
    expect(steps[0]).toEqual(['created → que', 'create', '']);
    expect(steps[1][0]).toBe('que → run');
    expect(steps[1][2]).toMatch(/^pid \d+, attempt 1$/);
    expect(steps[2][0]).toBe('run → err');
    expect(steps[2][2]).toMatch(/^exit 3 after \d+\.\d+s, used \d+\.\d+s CPU \(user \d+\.\d+s, system \d+\.\d+s\)(, IO read [\w. ]+, written [\w. ]+)?$/);
    expect(JSON.stringify(steps)).not.toMatch(/[{}]|wall_ms|·/);
  });

  it('a script killed by SIGKILL: "killed by SIGKILL", no raw exit JSON', async () => {
    const pidFile = path.join(w.root, 'forever.pid');
    const id = await send(w.base, 'test', { param1: 'forever', param2: pidFile });
    process.kill(await pidInFile(pidFile), 'SIGKILL');
    await waitState(w.base, 'test', id, ['err']);
    const last = (await timeline(id)).at(-1)!;
    expect(last[0]).toBe('run → err');
    expect(last[2]).toMatch(/killed by SIGKILL after \d+(\.\d+)?s/);
    expect(last[2]).not.toMatch(/[{}"]|exit SIGKILL/);
  });

  it('a retry reads as its failure, its number and its delay', async () => {
    const id = await send(w.base, 'test', { param1: 'flaky', param2: '2', max_retries: 1, backoff_base: 0.01, min_retry_delay: 0, retry_jitter: 0 });
    await waitState(w.base, 'test', id, ['done']);
    const steps = await timeline(id);
    expect(steps.map((s) => s[0])).toEqual(['created → que', 'que → run', 'run → que', 'que → run', 'run → done']);
    expect(steps[2][1]).toBe('retry');
    expect(steps[2][2]).toMatch(
      /^attempt 1 failed failure: err, retry 1 of 1 in \d+(\.\d+)?s, exit 0 after \d+\.\d+s, used \d+\.\d+s CPU \(user \d+\.\d+s, system \d+\.\d+s\)(, IO read [\w. ]+, written [\w. ]+)?$/,
    );
    expect(steps[4][2]).toMatch(/^exit 0 after \d+\.\d+s, used \d+\.\d+s CPU \(user \d+\.\d+s, system \d+\.\d+s\)(, IO read [\w. ]+, written [\w. ]+)?$/);
  });
});
