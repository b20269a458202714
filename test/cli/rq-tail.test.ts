// rq tail as the README's quick start has a new user type it: the id sendmesg printed, alone, against a root whose rq-mgr runs its queues.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mgrRootForFile } from '../helpers/per-test-root.js';
import { type Run, expectOneLineError, runRq } from '../helpers/rq-cli.js';

const root = mgrRootForFile({
  // The README's queue: it greets $RQ_PARAM1 on stdout and reports done on fd 3.
  hello: async (dir) => {
    const script = path.join(dir, 'hello-run');
    await fs.writeFile(script, '#!/bin/bash\necho "hello $RQ_PARAM1"\necho "done greeted" >&3\n', { mode: 0o755 });
    return { script };
  },
  other: {},
});

function rq(args: string[]): Promise<Run> {
  return runRq(args, { root: root.t.root });
}

describe('rq tail <id>', () => {
  it('takes the id alone, as the README writes it, finding its queue; the full id and <queue>/<id> print the same', async () => {
    const sent = await rq(['sendmesg', '--dest', 'hello', '--param1', 'world']);
    expect(sent.code, sent.err.join('\n')).toBe(0);
    const full = sent.out[0].slice('ok '.length);
    expect(full).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${root.t.port}/q/hello/\\d{8}\\.\\d{4}\\.\\d{2}\\.\\d{3}\\.\\d+$`));
    const id = full.split('/').pop()!;

    const r = await rq(['tail', id]);
    expect(r).toMatchObject({ code: 0, err: [] });
    expect(r.out).toEqual([expect.stringMatching(/ - RQ START - .*hello-run$/), 'hello world']);
    expect(await rq(['tail', full])).toEqual(r);
    expect(await rq(['tail', `hello/${id}`])).toEqual(r);
    expect(await rq(['tail', '--msg_id', id])).toEqual(r);
  });

  it('an id no queue holds is one line naming the queues asked, exit 6', async () => {
    expectOneLineError(
      await rq(['tail', '20200101.0000.00.000.1']),
      /^rq: msg not found: no queue of this root holds 20200101\.0000\.00\.000\.1 \(asked 2: hello, other\)$/,
      6,
    );
  });

  it('a malformed id is refused with a full id of this root as the example: its own host and port', async () => {
    const r = await rq(['tail', 'hello']);
    expectOneLineError(
      r,
      /^rq: --msg_id: expected a full message id such as http:\/\/127\.0\.0\.1:(\d+)\/q\/<queue>\/\S+ \(or <queue>\/<id>, or the id alone\), received "hello"$/,
      2,
    );
    expect(r.err[0]).toContain(`http://127.0.0.1:${root.t.port}/q/`);
  });
});
