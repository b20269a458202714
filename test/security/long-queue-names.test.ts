// Long queue names against a real root: a name whose socket path would not fit is refused everywhere (scandir, rq-mgr, HTTP, CLI), and no message ever reaches or runs in another queue.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { queueNameRoom } from '../../src/config/socket-paths.js';
import { BIN, MgrProc, run } from '../helpers/mgr-proc.js';
import { expectOneLineError, runRq } from '../helpers/rq-cli.js';
import { addQueue, waitFor } from '../helpers/rq-root.js';
import { type WebRoot, postForm, send, startWebRoot, waitState } from '../web/web-root.js';

/** A queue script that records who ran what: its own label, the message's queue and id. */
const recorder = (label: string, ranLog: string) =>
  `#!/bin/bash\nprintf '%s %s %s\\n' ${label} "$RQ_DEST_QUEUE" "$RQ_MSG_ID" >> ${ranLog}\necho "done ran" >&3\n`;

describe('two queues whose names share a long prefix, at the boundary of this root', () => {
  let w: WebRoot;
  let max: number;
  /** Exactly as long as this root allows: a queue. */
  let fits: string;
  /** One character more: refused. */
  let over: string;
  /** Made by a version that did not check, both longer than the limit and equal in their first 95 characters: their socket paths, cut at 107 bytes, were one. */
  let legacy: [string, string];
  let ranLog: string;
  let mgrLog: string;
  const lines = async () =>
    (await fs.readFile(mgrLog, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { level: number; msg: string; entry?: string; queue?: string; reason?: string });
  const ran = async () => (await fs.readFile(ranLog, 'utf8').catch(() => '')).split('\n').filter(Boolean);

  beforeAll(async () => {
    w = await startWebRoot({
      queues: {},
      config: { allow_new_queue: true, script_dirs: ['apps'] },
      setup: async (root) => {
        max = queueNameRoom(root).maxBytes;
        fits = 'l'.repeat(max);
        over = `${fits}x`;
        legacy = [`${'c'.repeat(95)}1`, `${'c'.repeat(95)}2`];
        ranLog = path.join(root, 'ran.log');
        for (const label of ['fits', 'over']) {
          await fs.mkdir(path.join(root, 'apps', label), { recursive: true });
          await fs.writeFile(path.join(root, 'apps', label, 'run'), recorder(label, ranLog), { mode: 0o755 });
        }
        await fs.symlink(path.join(root, 'apps', 'fits'), path.join(root, 'scandir', fits));
        await fs.symlink(path.join(root, 'apps', 'over'), path.join(root, 'scandir', over));
        for (const name of legacy) await addQueue(root, name, { script: path.join(root, 'apps', 'over', 'run') });
        await fs.writeFile(
          path.join(root, 'apps', 'over.json'),
          JSON.stringify({ name: over, script: path.join(root, 'apps', 'over', 'run'), num_workers: 1, exec_prefix: '' }),
        );
      },
    });
    mgrLog = path.join(w.root, 'log', 'mgr-test.log');
    await w.mgr.waitQueueUp(fits);
  }, 60_000);
  afterAll(async () => {
    await w?.stop();
  });

  it('the name that fits is a queue and runs its own messages', async () => {
    const id = await send(w.base, fits, { param1: 'one' });
    expect(await waitState(w.base, fits, id, ['done'])).toBe('done');
    expect(await ran()).toEqual([`fits ${fits} ${id}`]);
  });

  it('the name one character over is refused by scandir, with the limit, logged once at warn', async () => {
    const reason = `queue name: expected at most ${max} characters for this root (socket path queues/<q>/events.sock must fit in 107 bytes), received ${max + 1} characters`;
    await waitFor(async () => (await lines()).some((l) => l.entry === over), 'the refusal of the long name in the log');
    // A later link makes scandir pass again; the pass that makes `marker` has judged `over` once more.
    await fs.symlink(path.join(w.root, 'apps', 'fits'), path.join(w.root, 'scandir', 'marker'));
    await w.mgr.waitQueueUp('marker');
    const told = (await lines()).filter((l) => l.entry === over);
    expect(told).toEqual([expect.objectContaining({ level: 40, msg: 'scandir entry cannot become a queue', reason })]);
    expect(await w.mgr.cmd('queues')).not.toContain(over);
    await expect(fs.access(queuePaths(w.root, over).dir)).rejects.toThrow(/ENOENT/);
  });

  it('queues made before the check, whose socket paths were one, are not started and say why', async () => {
    await waitFor(
      async () => (await lines()).filter((l) => l.msg === 'queue not started: its name does not fit this root').length === 2,
      'both legacy queues refused',
    );
    const queues = (await w.mgr.cmd('queues')) as string[];
    for (const name of legacy) expect(queues).not.toContain(name);
    // Neither listens, on its own path or a cut one.
    const sockets = (await fs.readdir(path.join(w.root, 'queues'), { recursive: true })).filter((p) => p.endsWith('.sock') || p.endsWith('.soc'));
    expect(sockets.every((p) => p.startsWith(`${fits}/`) || p.startsWith('marker/'))).toBe(true);
  });

  it('HTTP: messages for a name that does not fit are refused with the limit, and nothing is created or run anywhere', async () => {
    const before = await ran();
    for (const name of [over, ...legacy]) {
      const post = await postForm(`${w.base}/q/${name}/new_message`, { mesg: JSON.stringify({ dest: name, param1: 'hijack' }), x_format: 'json' });
      expect(post.status, name).toBe(404);
      expect(await post.text()).toContain(`expected at most ${max} characters for this root`);
      const counts = await fetch(`${w.base}/q/${name}.json`);
      expect(counts.status, name).toBe(404);
    }
    for (const name of legacy) {
      for (const state of ['prep', 'que', 'run', 'done', 'err']) expect(await fs.readdir(queuePaths(w.root, name).state[state as 'que'])).toEqual([]);
    }
    // The queue that fits kept only its own message.
    expect(await (await fetch(`${w.base}/q/${fits}.json`)).json()).toMatchObject({ prep_size: 0, que_size: 0, run_size: 0, done_size: 1, err_size: 0 });
    expect(await ran()).toEqual(before);
  });

  it('HTTP create: one character over the limit is a 400 naming the field and the limit; exactly at it is made', async () => {
    const script = path.join(w.root, 'apps', 'fits', 'run');
    const refused = await postForm(`${w.base}/new_queue`, {
      'queue[name]': over,
      'queue[script]': script,
      'queue[num_workers]': '1',
      'queue[exec_prefix]': '',
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toBe(
      `400 - queue[name]: expected at most ${max} characters for this root (socket path queues/<q>/events.sock must fit in 107 bytes), received ${max + 1} characters`,
    );
    const link = await postForm(`${w.base}/new_queue_link`, { 'queue[json_path]': 'apps/over.json' });
    expect(link.status).toBe(400);
    expect(await link.text()).toMatch(
      new RegExp(`^400 - name of apps/over\\.json: expected at most ${max} characters for this root .* received ${max + 1} characters$`),
    );
    await expect(fs.access(queuePaths(w.root, over).dir)).rejects.toThrow(/ENOENT/);

    const atLimit = 'm'.repeat(max);
    const made = await postForm(`${w.base}/new_queue`, {
      'queue[name]': atLimit,
      'queue[script]': script,
      'queue[num_workers]': '1',
      'queue[exec_prefix]': '',
    });
    expect(made.status).toBe(303);
    const id = await send(w.base, atLimit, { param1: 'made' });
    expect(await waitState(w.base, atLimit, id, ['done'])).toBe('done');
    expect(await ran()).toContain(`fits ${atLimit} ${id}`);
  });

  it("rq-mgr's own create_queue refuses the name with the limit", async () => {
    const reply = await w.mgr.cmd(
      'create_queue',
      JSON.stringify({ name: over, script: path.join(w.root, 'apps', 'over', 'run'), num_workers: 1, exec_prefix: '' }),
    );
    expect(reply).toEqual([
      'fail',
      `queue name: expected at most ${max} characters for this root (socket path queues/<q>/events.sock must fit in 107 bytes), received ${max + 1} characters`,
    ]);
  });

  it('CLI: sendmesg to the name exits non-zero with the limit; to the one that fits it is sent', async () => {
    for (const name of [over, legacy[1]]) {
      const r = await runRq(['sendmesg', '--dest', name, '--param1', 'hijack'], { root: w.root });
      expectOneLineError(
        r,
        new RegExp(
          `^rq: queue name: expected at most ${max} characters for this root \\(socket path queues/<q>/events\\.sock must fit in 107 bytes\\), received ${name.length} characters$`,
        ),
      );
    }
    const ok = await runRq(['sendmesg', '--dest', fits, '--param1', 'cli'], { root: w.root });
    expect(ok.code).toBe(0);
    const id = ok.out[0].split('/').pop()!;
    expect(await waitState(w.base, fits, id, ['done'])).toBe('done');
    // Every run was by the script of the queue the message was sent to.
    for (const line of await ran()) {
      const [label, queue] = line.split(' ');
      expect(label).toBe('fits');
      expect([fits, 'm'.repeat(max)]).toContain(queue);
    }
  });
});

describe("a root too long for rq-mgr's own sockets", () => {
  /** A root of exactly `n` bytes with the runtime folders and a config. */
  async function rootOf(n: number): Promise<string> {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-longroot-'));
    const root = path.join(base, 'r'.repeat(n - Buffer.byteLength(base) - 1));
    expect(Buffer.byteLength(root)).toBe(n);
    for (const d of ['config', 'queues', 'scandir', 'timers', 'log']) await fs.mkdir(path.join(root, d), { recursive: true });
    await fs.writeFile(rootPaths(root).configFile, JSON.stringify({ env: 'test', host: '127.0.0.1', port: 1, addr: '127.0.0.1' }));
    return root;
  }
  const gone = (root: string) => fs.rm(path.dirname(root), { recursive: true, force: true });

  it('one byte over: run and start fail at once with the limit, and nothing listens', async () => {
    const root = await rootOf(87);
    try {
      const expected = `root ${root}: expected a path of at most 86 bytes (socket path config/queuemgr.sock must fit in 107 bytes), received 87 bytes`;
      for (const command of ['run', 'start']) {
        const r = await run(BIN('rq-mgr'), [command, '--root', root]).then(
          () => expect.unreachable(`rq-mgr ${command} started`),
          (e: { code: number; stderr: string }) => e,
        );
        expect(r.code, command).toBe(1);
        expect(r.stderr, command).toBe(`rq-mgr: ${expected}\n`);
      }
      expect((await fs.readdir(path.join(root, 'config'))).filter((f) => f.includes('sock'))).toEqual([]);
    } finally {
      await gone(root);
    }
  });

  it('exactly at the limit: rq-mgr runs and answers on its socket', async () => {
    const root = await rootOf(86);
    const mgr = await MgrProc.start(root);
    try {
      expect(await mgr.cmd('ping')).toEqual(['pong']);
      expect(Buffer.byteLength(rootPaths(root).mgrSock)).toBe(107);
    } finally {
      await mgr.stop();
      await gone(root);
    }
  }, 30_000);
});
