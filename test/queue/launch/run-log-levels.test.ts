// The level a run's end is logged at, read from a real queue process's log file: failures at warn, the rest at info.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';

/** pino's numeric levels. */
const INFO = 30;
const WARN = 40;

let t: TestRoot;
let plain: QueueProc;
let retrying: QueueProc;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'plain');
  await addQueue(t.root, 'retrying', { extra: { retry: { max_retries: 1, backoff_base: 0.1, min_retry_delay: 0, retry_jitter: 0 } } });
  plain = await QueueProc.start(t.root, 'plain');
  retrying = await QueueProc.start(t.root, 'retrying');
});
afterAll(async () => {
  await Promise.all([plain?.stop(), retrying?.stop()]);
  await t?.cleanup();
});

interface LogLine {
  level: number;
  msg: string;
  msg_id?: string;
  state?: string;
  failure?: string;
}

/**
 * The lines logged about one message once `count` of them say how a run ended. pino writes
 * asynchronously, so the file is read until they are there.
 */
async function endLines(q: QueueProc, id: string, count: number): Promise<LogLine[]> {
  const file = path.join(t.root, 'log', `queue-${q.name}.log`);
  return waitFor(async () => {
    const lines = (await fs.readFile(file, 'utf8'))
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine)
      .filter((l) => l.msg_id === id && l.state !== undefined);
    return lines.length >= count ? lines : false;
  }, `${count} run-end lines of ${q.name}/${id} in the queue log`);
}

describe('run ends in the queue log', () => {
  it('done is info; err (by the script or by its exit) is warn', async () => {
    const done = await plain.send({ param1: 'done' });
    const err = await plain.send({ param1: 'err' });
    const exit3 = await plain.send({ param1: 'err_exit1' });
    const noLine = await plain.send({ param1: 'nothing' });
    for (const id of [done, err, exit3, noLine]) await plain.waitState(id, ['done', 'err']);
    expect((await endLines(plain, done, 1)).map((l) => [l.level, l.state, l.msg])).toEqual([[INFO, 'done', 'script finished']]);
    for (const id of [err, exit3, noLine]) {
      expect(
        (await endLines(plain, id, 1)).map((l) => [l.level, l.state, l.msg]),
        id,
      ).toEqual([[WARN, 'err', 'script finished']]);
    }
  });

  it('under a retry policy each failed attempt is warn with its failure kind, the retried one too', async () => {
    const id = await retrying.send({ param1: 'err' });
    await retrying.waitState(id, ['err']);
    const lines = await endLines(retrying, id, 2);
    expect(lines.map((l) => [l.level, l.state, l.failure])).toEqual([
      [WARN, 'que', 'err'],
      [WARN, 'err', 'err'],
    ]);
  });
});
