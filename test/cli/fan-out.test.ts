// The commands that ask every queue (queues, tagged, tracked, cancel --tag, a message id alone) against a real rq-mgr: a queue that does not answer is its own line; rq-mgr stopped is one line.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mgrRootForFile } from '../helpers/per-test-root.js';
import { type Run, expectOneLineError, runRq } from '../helpers/rq-cli.js';
import { addQueue } from '../helpers/rq-root.js';

const root = mgrRootForFile({ one: {}, two: {} });

function rq(args: string[]): Promise<Run> {
  return runRq(args, { root: root.t.root });
}

describe('asking every queue', () => {
  it('with rq-mgr up, a queue whose process does not answer is named on its own line; the others answer', async () => {
    // Made after rq-mgr started (not from scandir/): nothing runs it.
    await addQueue(root.t.root, 'three');
    try {
      const r = await rq(['queues']);
      expect(r.code).toBe(1);
      expect(r.out.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(['fail 3', 'one UP', 'three UNREACHABLE', 'two UP']);
      expect(r.err).toEqual([expect.stringMatching(/^rq: queue three: its process does not answer \(.*ENOENT.*\)$/)]);
      expect(await rq(['tagged', 'nothing'])).toEqual({ code: 1, out: ['fail 0'], err: r.err });
    } finally {
      await fs.rm(path.join(root.t.root, 'queues', 'three'), { recursive: true });
    }
  });

  it('with rq-mgr stopped, each command that asks every queue says so in one line naming its socket, exit 3', async () => {
    await root.mgr.stop();
    const line = new RegExp(
      `^rq: rq-mgr is not running \\(no answer on ${root.t.root}/config/queuemgr\\.sock\\); start it with bin/rq-mgr start --root ${root.t.root}$`,
    );
    for (const args of [
      ['queues'],
      ['queues', '--json'],
      ['tagged', 'release-42'],
      ['tracked'],
      ['cancel', '--tag', 'release-42'],
      ['statusmesg', '20200101.0000.00.000.1'],
      ['tail', '20200101.0000.00.000.1'],
    ]) {
      const r = await rq(args);
      expect(r.err, args.join(' ')).toHaveLength(1);
      expectOneLineError(r, line, 3);
    }
  });
});
