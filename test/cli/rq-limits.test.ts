// rq's limit options and commands with a real rq-mgr (rq-beyond §B12, §B1.12): sendmesg --limit/--limit_concurrency, rq limits (slots in use, waiters, orphans), waiting's limit lines, the refusals of bad input (exit 1, one line, nothing created).
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { killLeftoverGroups, newPidInFile, pidInFile } from '../helpers/process-groups.js';
import { type Run, expectOneLineError } from '../helpers/rq-cli.js';
import { type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';
import { cli, refOf, shortId } from './depends-limits-harness.js';

const groups = killLeftoverGroups();

describe('concurrency limits from the command line, with a real rq-mgr (rq-beyond §B12)', () => {
  let t: TestRoot;
  let mgr: MgrProc;
  const { rq, send, messages } = cli(() => t);
  const pidFile = (name: string) => path.join(t.root, 'pids', `${name}.pid`);

  /** A `forever` script holding a slot of `limit` on `dest`, once it runs: its full id and process group. */
  async function holder(dest: string, name: string, ...args: string[]): Promise<{ id: string; pid: number }> {
    const id = await send(dest, '--param1', 'forever', '--param2', pidFile(name), ...args);
    const pid = await pidInFile(pidFile(name));
    groups.push(pid);
    return { id, pid };
  }

  /** Waits until `rq limits` prints exactly `lines` after its `ok <n>`. */
  async function limitsShow(args: string[], lines: string[]): Promise<void> {
    let last: Run | undefined;
    try {
      await waitFor(
        async () => {
          last = await rq(['limits', ...args]);
          return JSON.stringify(last.out) === JSON.stringify([`ok ${lines.length}`, ...lines]);
        },
        `rq limits ${args.join(' ')} to print ${lines.join(' | ')}`,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message} (last: ${JSON.stringify(last)})`, { cause: err });
    }
    expect(last).toEqual({ code: 0, out: [`ok ${lines.length}`, ...lines], err: [] });
  }

  const finish = (queue: string, fullId: string) =>
    waitFor(
      async () => {
        const r = await mgr.q(queue, 'wait_message', { msg_id: shortId(fullId), timeout: 5 });
        return r[0] === 'ok' ? r[1] : false;
      },
      `${fullId} to finish`,
      20_000,
    );

  beforeAll(async () => {
    t = await makeRoot();
    await fs.mkdir(path.join(t.root, 'pids'));
    await fs.writeFile(rootPaths(t.root).limitsFile, JSON.stringify({ reports: 1 }));
    for (const q of ['lim1', 'lim2', 'orph']) await addQueue(t.root, q, { num_workers: 2 });
    mgr = await MgrProc.start(t.root);
    for (const q of ['lim1', 'lim2', 'orph']) await mgr.waitQueueUp(q);
  });

  afterAll(async () => {
    await mgr?.stop();
    await t?.cleanup();
  });

  it('rq limits: the slots in use of a config key and its waiters; waiting shows their place; --key, --json; the key is gone once free', async () => {
    expect(await rq(['limits'])).toEqual({ code: 0, out: ['ok 0'], err: [] });
    const h = await holder('lim1', 'reports-holder', '--limit', 'reports');
    const w1 = await send('lim2', '--param1', 'done', '--limit', 'reports');
    await limitsShow([], ['reports 1/1 waiting 1']);
    const w2 = await send('lim1', '--param1', 'done', '--limit', 'reports');
    await limitsShow([], ['reports 1/1 waiting 2']);
    expect(await rq(['limits', '--key', 'reports'])).toEqual({ code: 0, out: ['ok 1', 'reports 1/1 waiting 2'], err: [] });
    expect(await rq(['limits', '--key', 'nosuch'])).toEqual({ code: 0, out: ['ok 0'], err: [] });

    const j = await rq(['limits', '--key', 'reports', '--json']);
    expect(j.code).toBe(0);
    expect(j.out).toHaveLength(1);
    expect(JSON.parse(j.out[0])).toEqual({
      reports: {
        concurrency: 1,
        source: 'config',
        holders: [{ ref: refOf(h.id), queue: 'lim1', since: expect.any(Number), granted_at: expect.any(Number) }],
        waiting: [
          { ref: refOf(w1), queue: 'lim2', since: expect.any(Number), position: 1 },
          { ref: refOf(w2), queue: 'lim1', since: expect.any(Number), position: 2 },
        ],
      },
    });
    expect(await rq(['waiting', '--queue', 'lim2'])).toEqual({ code: 0, out: ['ok 1', `${refOf(w1)} limit reports position 1`], err: [] });
    expect(await rq(['waiting', '--queue', 'lim1', '--reason', 'limit'])).toEqual({ code: 0, out: ['ok 1', `${refOf(w2)} limit reports position 2`], err: [] });
    // In waiting, --limit is still a page size.
    expect(await rq(['waiting', '--queue', 'lim1', '--limit', '1'])).toEqual({ code: 0, out: ['ok 1', `${refOf(w2)} limit reports position 2`], err: [] });

    expect((await rq(['cancel', '--msg_id', h.id, '--wait=20'])).out).toEqual(['ok msg cancelling', expect.stringMatching(/^ok err - CANCELLED/)]);
    expect(await finish('lim2', w1)).toMatchObject({ state: 'done' });
    expect(await finish('lim1', w2)).toMatchObject({ state: 'done' });
    await limitsShow([], []);
  });

  it('a key of the message (a template with --limit_concurrency): its expansion is listed; a conflicting or missing concurrency is refused, nothing created', async () => {
    const h = await holder('lim2', 'api-holder', '--param3', 'acme', '--limit', 'api:{param3}', '--limit_concurrency', '1');
    await limitsShow(['--key', 'api:acme'], ['api:acme 1/1 waiting 0']);
    const j = JSON.parse((await rq(['limits', '--key', 'api:acme', '--json'])).out[0]);
    expect(j['api:acme']).toMatchObject({ concurrency: 1, source: 'message' });

    const before = [await messages('lim1'), await messages('lim2')];
    const conflict = await rq(['sendmesg', '--dest', 'lim1', '--param1', 'done', '--param3', 'acme', '--limit', 'api:{param3}', '--limit_concurrency', '2']);
    expect(conflict.code).toBe(1);
    expect(conflict.err).toEqual([]);
    expect(conflict.out).toHaveLength(1);
    expect(conflict.out[0]).toMatch(/^fail limit_concurrency: key "api:acme" has concurrency 1 \(.+\), received 2$/);
    expect(await rq(['sendmesg', '--dest', 'lim1', '--param1', 'done', '--limit', 'nokey'])).toEqual({
      code: 1,
      out: ['fail limit: key "nokey" has no concurrency: add it to config/limits.json or send limit_concurrency'],
      err: [],
    });
    expect(await rq(['sendmesg', '--dest', 'lim1', '--param1', 'done', '--limit', 'reports', '--limit_concurrency', '3'])).toEqual({
      code: 1,
      out: ['fail limit_concurrency: key "reports" has concurrency 1 (config/limits.json), received 3'],
      err: [],
    });
    expect([await messages('lim1'), await messages('lim2')]).toEqual(before);

    expect((await rq(['cancel', '--msg_id', h.id, '--wait=20'])).code).toBe(0);
    await limitsShow(['--key', 'api:acme'], []);
  });

  it('refuses bad --limit, --limit_concurrency and limits options before anything is sent: exit 1, one line, nothing created', async () => {
    const before = await messages('lim1');
    const refused: [string[], RegExp][] = [
      [['--limit'], /^rq: --limit: expected a value \(--limit KEY or --limit=KEY\), received no value$/],
      [['--limit', ''], /^rq: --limit: expected a key of 1-256 characters without control characters, received ""$/],
      [['--limit', 'x'.repeat(257)], /^rq: --limit: expected a key of 1-256 characters without control characters, received "x{20,}/],
      [['--limit', 'api:{param5}'], /^rq: --limit: the template names an unknown field \{param5\} \(use \{param1\}\.\.\{param4\} or \{queue\}\)$/],
      [
        ['--limit', 'reports', '--limit_concurrency'],
        /^rq: --limit_concurrency: expected a value \(--limit_concurrency N or --limit_concurrency=N\), received no value$/,
      ],
      [['--limit', 'reports', '--limit_concurrency', '0'], /^rq: --limit_concurrency: expected a whole number 1-10000, received "0"$/],
      [['--limit', 'reports', '--limit_concurrency', '10001'], /^rq: --limit_concurrency: expected a whole number 1-10000, received "10001"$/],
      [['--limit', 'reports', '--limit_concurrency', 'two'], /^rq: --limit_concurrency: expected a whole number 1-10000, received "two"$/],
    ];
    for (const [args, text] of refused) expectOneLineError(await rq(['sendmesg', '--dest', 'lim1', '--param1', 'done', ...args]), text, 2);
    expect(await messages('lim1')).toEqual(before);

    const key = /^rq: --key: expected a limit key of 1-256 characters without control characters, received /;
    expectOneLineError(await rq(['limits', '--key']), new RegExp(`${key.source}no value$`), 2);
    expectOneLineError(await rq(['limits', '--key', '']), new RegExp(`${key.source}""$`), 2);
    expectOneLineError(await rq(['limits', '--key', 'a\tb']), new RegExp(`${key.source}"a\\\\tb"$`), 2);
    expectOneLineError(await rq(['limits', '--json=yes']), /^rq: --json: expected no value \(a flag\), received "yes"$/, 2);
  });

  it('a queue process killed -9 leaves its slot counted and marked orphaned until its next incarnation has killed the script', async () => {
    const configFile = queuePaths(t.root, 'orph').configFile;
    const config = await fs.readFile(configFile, 'utf8');
    const h = await holder('orph', 'orphan', '--limit', 'solo', '--limit_concurrency', '1');
    await limitsShow(['--key', 'solo'], ['solo 1/1 waiting 0']);
    // Restarts fail while its config is unreadable: the slot stays orphaned for as long as that lasts.
    await fs.writeFile(configFile, '{ not json');
    process.kill(await mgr.waitQueueUp('orph'), 'SIGKILL');
    await limitsShow(['--key', 'solo'], ['solo 1/1 waiting 0 (1 orphaned)']);
    await limitsShow([], ['solo 1/1 waiting 0 (1 orphaned)']);

    // Repaired: the next incarnation kills the leftover script, frees the slot, and runs the message again (at least once).
    await fs.writeFile(configFile, config);
    const again = await newPidInFile(pidFile('orphan'), h.pid, 'the message to run again', 20_000);
    groups.push(again);
    await limitsShow(['--key', 'solo'], ['solo 1/1 waiting 0']);
    expect((await rq(['cancel', '--msg_id', h.id, '--wait=20'])).code).toBe(0);
    await limitsShow([], []);
  });
});
