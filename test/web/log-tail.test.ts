// LogTail in-process on a real message directory: what ends a tail, and what only delays its next look.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Located, LogTail } from '../../src/web/log-tail.js';

let root: string;
let dir: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-log-tail-'));
  dir = path.join(root, 'done', 'm');
  await fs.mkdir(path.join(dir, 'job'), { recursive: true });
  await fs.writeFile(path.join(dir, 'job', 'stdio.log'), 'all of it\n');
});
afterEach(() => fs.rm(root, { recursive: true, force: true }));

/** A tail whose locate answers from `answers` in turn (an Error is thrown), the last one for good. */
function tail(answers: (Located | null | Error)[]): { ended: Promise<Located | null>; text: () => string; asked: () => number } {
  let sent = '';
  let asked = 0;
  let end!: (loc: Located | null) => void;
  const ended = new Promise<Located | null>((r) => (end = r));
  const t = new LogTail({
    locate: async () => {
      const a = answers[Math.min(asked++, answers.length - 1)];
      if (a instanceof Error) throw a;
      return a;
    },
    stateDirs: [],
    msgId: 'm',
    file: 'stdio.log',
    offset: 0,
    send: async (text) => void (sent += text),
    state: () => undefined,
    end,
    log: pino({ level: 'silent' }),
  });
  void t.start();
  return { ended, text: () => sent, asked: () => asked };
}

describe('LogTail', () => {
  const done = (): Located => ({ state: 'done', status: 'done - ok', dir });

  it('a queue that does not answer for a moment delays the next look; it does not end the tail as "not found"', async () => {
    const t = tail([new Error('no reply from q.sock: timed out after 10000 ms'), new Error('no reply'), done()]);
    expect(await t.ended).toEqual(done());
    expect(t.text()).toBe('all of it\n');
    expect(t.asked()).toBe(3);
  });

  it('a queue that keeps not answering ends the tail once its silence has lasted the window, as gone', async () => {
    const t = tail([new Error('no reply')]);
    expect(await t.ended).toBeNull();
    // 5, 10, 20 … 640 ms, then one more look after the window's last delay.
    expect(t.asked()).toBe(9);
  });

  it('a message the queue no longer knows and no state directory holds ends the tail with null at the second "not found", with no wait', async () => {
    const t = tail([null]);
    expect(await t.ended).toBeNull();
    // The second answer is asked after the disk showed it in no state directory: a commit's moment in neither index is over by then.
    expect(t.asked()).toBe(2);
  });
});
