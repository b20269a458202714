// The rq tool asking a queue that rq-mgr is still starting: the README's quick start pasted whole, `ln -s` into scandir/ then sendmesg at once.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mgrRootForFile } from '../helpers/per-test-root.js';
import { addQueue, waitFor } from '../helpers/rq-root.js';
import { expectOneLineError, runRq } from '../helpers/rq-cli.js';
import { firstStart } from '../../src/cli/queue-ask.js';

const root = mgrRootForFile({ other: {} });

/** A queue directory as the README makes it: an executable `run` greeting $RQ_PARAM1. */
async function queueDir(name: string): Promise<string> {
  const dir = path.join(root.t.root, 'scripts-of-test', name);
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'run'), '#!/bin/bash\necho "hello $RQ_PARAM1"\necho "done greeted" >&3\n', { mode: 0o755 });
  return dir;
}

describe('firstStart: which queue processes a command waits for', () => {
  it('a first start, whether or not it serves yet (it may have begun between the failed connect and the look), and no restart', () => {
    expect(firstStart({ status: 'RUNNING', restarts: 0 })).toBe(true);
    expect(firstStart({ status: 'RUNNING', restarts: 1 })).toBe(false);
    expect(firstStart({ status: 'BACKOFF', restarts: 0 })).toBe(false);
    expect(firstStart({ status: 'STOPPED', restarts: 0 })).toBe(false);
  });
});

describe('a queue linked into scandir/ a moment ago', () => {
  it('is waited for by a command sent right after the link, which then succeeds', async () => {
    const names = ['hello1', 'hello2', 'hello3'];
    const dirs = await Promise.all(names.map(queueDir));
    for (const [i, name] of names.entries()) {
      await fs.symlink(dirs[i], path.join(root.t.root, 'scandir', name));
      const sent = await runRq(['sendmesg', '--dest', name, '--param1', 'world', '--wait'], { root: root.t.root });
      expect([sent.code, sent.err], name).toEqual([0, []]);
      expect(sent.out.join('\n'), name).toMatch(new RegExp(`/q/${name}/`));
    }
  });

  it('a queue whose process keeps dying (BACKOFF, restarted) is not waited for: exit 3 at once', async () => {
    // A config its queue process refuses: it exits at start, and rq-mgr restarts it with a back-off.
    await addQueue(root.t.root, 'broken', { extra: { timout: 3 } });
    root.mgr.child.kill('SIGHUP');
    await waitFor(async () => ((await root.mgr.cmd('status'))[1]?.broken?.restarts ?? 0) >= 1, 'broken to be restarted');
    const t0 = Date.now();
    const r = await runRq(['sendmesg', '--dest', 'broken', '--param1', 'x'], { root: root.t.root });
    // Waiting would take the whole START_WAIT_MS (5 s) by itself.
    expect(Date.now() - t0).toBeLessThan(5000);
    expectOneLineError(r, /^rq: queue broken: its process does not answer/, 3);
  });

  it('a link whose config.json rq-mgr refuses is told with that reason, not as no queue', async () => {
    const dir = await queueDir('badcfg');
    await fs.writeFile(path.join(dir, 'config.json'), '{ broken');
    await fs.symlink(dir, path.join(root.t.root, 'scandir', 'badcfg'));
    await waitFor(async () => ((await root.mgr.cmd('refused_queues'))[1] ?? []).some((e: { entry: string }) => e.entry === 'badcfg'), 'badcfg refused');
    expectOneLineError(
      await runRq(['sendmesg', '--dest', 'badcfg', '--param1', 'x'], { root: root.t.root }),
      /^rq: queue badcfg is not running: .*config\.json/,
      1,
    );
  });

  it('a name neither linked nor a queue is still refused at once as no queue', async () => {
    expectOneLineError(await runRq(['sendmesg', '--dest', 'nolink', '--param1', 'x'], { root: root.t.root }), /^rq: queue not found: nolink$/, 1);
    // One near a queue of the root names it.
    expectOneLineError(
      await runRq(['sendmesg', '--dest', 'Other', '--param1', 'x'], { root: root.t.root }),
      /^rq: queue not found: Other \(did you mean other\?\)$/,
      1,
    );
  });
});
