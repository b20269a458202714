// rq tail as the README's quick start has a new user type it: the id sendmesg printed, alone, against a root whose rq-mgr runs its queues.
import fs from 'node:fs/promises';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { mgrRootForFile } from '../helpers/per-test-root.js';
import { MgrProc, run } from '../helpers/mgr-proc.js';
import { waitFor } from '../helpers/rq-root.js';
import { RQ_BIN, type Run, expectOneLineError, runRq } from '../helpers/rq-cli.js';

const root = mgrRootForFile({
  // The README's queue: it greets $RQ_PARAM1 on stdout and reports done on fd 3.
  hello: async (dir) => {
    const script = path.join(dir, 'hello-run');
    await fs.writeFile(script, '#!/bin/bash\necho "hello $RQ_PARAM1"\necho "done greeted" >&3\n', { mode: 0o755 });
    return { script };
  },
  other: {},
  // Runs until a line comes through the FIFO named by param2.
  gated: async (dir) => {
    const script = path.join(dir, 'gated-run');
    await fs.writeFile(script, '#!/bin/bash\necho "run $RQ_PARAM1"\nread -r line < "$RQ_PARAM2"\necho "got $line"\necho "done ok" >&3\n', { mode: 0o755 });
    return { script };
  },
});

/** bin/rq with `args` left running: what it has printed so far, and its exit code once it has ended. */
function started(args: string[]): { out: () => string; err: () => string; code: Promise<number | null> } {
  const env = { ...process.env };
  delete env.RQ_ROOT;
  const child = spawn(RQ_BIN, [...args, '--root', root.t.root], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  return { out: () => out, err: () => err, code: new Promise((resolve) => child.once('close', resolve)) };
}

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
      /^rq: msg not found: no queue of this root holds 20200101\.0000\.00\.000\.1 \(asked 3: gated, hello, other\)$/,
      6,
    );
  });

  it('rq-mgr stopped while it follows: one stderr line says so, the follow goes on, and the rerun is followed to its end', async () => {
    const gate = path.join(root.t.root, 'gate.fifo');
    await run('mkfifo', [gate]);
    const id = (await rq(['sendmesg', '--dest', 'gated', '--param1', 'x', '--param2', gate])).out[0].split('/').pop()!;
    const tail = started(['tail', id]);
    await waitFor(async () => tail.out().includes('run x'), 'the run to be followed');
    await root.mgr.stop();
    await waitFor(async () => tail.err().includes('does not answer'), 'tail to say the queue does not answer');
    expect(tail.err()).toBe(
      'rq: tail: queue gated does not answer (rq-mgr stopped, or the queue restarting); still following: the message goes on when its queue is back (Ctrl-C stops)\n',
    );
    root.mgr = await MgrProc.start(root.t.root);
    await waitFor(async () => tail.out().split('run x').length === 3, 'the rerun to be followed');
    await waitFor(async () => tail.err().endsWith('rq: tail: queue gated answers again; following\n'), 'tail to say the queue answers again');
    await fs.writeFile(gate, 'go\n');
    expect(await tail.code).toBe(0);
    expect(tail.out()).toMatch(/run x\n(.|\n)*run x\ngot go\n$/);
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
