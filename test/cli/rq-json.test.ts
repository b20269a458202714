// `--json` on every read command of rq, through the real bin/rq against a real rq-mgr: one JSON document, the documented fields, the same exit codes.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RQ_COMMANDS } from '../../src/cli/rq-commands.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { killLeftoverGroups } from '../helpers/process-groups.js';
import { type Run, runRq, sendmesg } from '../helpers/rq-cli.js';
import { PROJECT, type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';

/** The read commands: each takes --json (docs/cli.md, "JSON output", lists the same). */
const READ = [
  'statusmesg',
  'state',
  'statuscountmesg',
  'attachstatusmesg',
  'history',
  'running',
  'waiting',
  'limits',
  'tags',
  'tagged',
  'tracked',
  'stats',
  'failed',
  'wait',
  'queues',
  'ls',
];

let t: TestRoot;
let mgr: MgrProc;
let done: string;
let err: string;
let attached: string;
killLeftoverGroups();

const rq = (args: string[]): Promise<Run> => runRq(args, { root: t.root });

/** Runs a read command with and without --json: the same exit code, and with --json exactly one line of JSON, parsed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the documents are checked field by field
async function json(args: string[]): Promise<{ code: number; doc: any }> {
  const [lines, j] = await Promise.all([rq(args), rq([...args, '--json'])]);
  expect(j.code, `${args.join(' ')}: ${j.err.join('\n')}`).toBe(lines.code);
  expect(j.out, args.join(' ')).toHaveLength(1);
  return { code: j.code, doc: JSON.parse(j.out[0]) };
}

const send = (...args: string[]): Promise<string> => sendmesg(rq, 'jq', ...args);

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'jq', { num_workers: 2 });
  mgr = await MgrProc.start(t.root);
  await mgr.waitQueueUp('jq');
  done = await send('--param1', 'done', '--tags', 'nightly');
  err = await send('--param1', 'err');
  expect((await rq(['wait', done, '--timeout', '30'])).code).toBe(0);
  expect((await rq(['wait', err, '--timeout', '30'])).code).toBe(1);
  const file = path.join(t.root, 'report.csv');
  await fs.writeFile(file, 'a,b\n');
  attached = (await rq(['prepmesg', '--dest', 'jq', '--param1', 'done'])).out[0].slice('ok '.length);
  expect((await rq(['attachmesg', '--msg_id', attached, '--pathname', file])).code).toBe(0);
}, 60_000);

afterAll(async () => {
  await mgr?.stop();
  await t?.cleanup();
});

const shortId = (full: string) => full.split('/').pop()!;

describe('which commands take --json', () => {
  it.each(READ)('rq %s takes the --json flag', async (c) => {
    expect(RQ_COMMANDS[c].options.some((o) => o.name === 'json' && o.kind === 'flag')).toBe(true);
  });

  it('docs/cli.md names every read command in its JSON section', async () => {
    const doc = await fs.readFile(path.join(PROJECT, 'docs', 'cli.md'), 'utf8');
    const section = doc.slice(doc.indexOf('### JSON output'), doc.indexOf('## Commands'));
    for (const c of READ) expect(section, c).toContain(`\`${c}\``);
  });
});

describe('documents on one message', () => {
  it('state, statusmesg, statuscountmesg: {queue, msg_id, …}', async () => {
    expect((await json(['state', '--msg_id', done])).doc).toEqual({ queue: 'jq', msg_id: shortId(done), state: 'done' });
    expect((await json(['statusmesg', '--msg_id', err])).doc).toEqual({ queue: 'jq', msg_id: shortId(err), state: 'err', status: 'err - by design' });
    expect((await json(['statuscountmesg', '--msg_id', done])).doc).toEqual({ queue: 'jq', msg_id: shortId(done), count: 0 });
  });

  it('attachstatusmesg: {queue, msg_id, attachments: [{name, md5, size, path}]}', async () => {
    const { doc } = await json(['attachstatusmesg', '--msg_id', attached]);
    expect(doc).toMatchObject({ queue: 'jq', msg_id: shortId(attached), attachments: [{ name: 'report.csv', md5: expect.any(String), size: 4 }] });
    expect(doc.attachments[0].path).toContain(shortId(attached));
  });

  it('history: the array of history entries', async () => {
    const { doc } = await json(['history', '--msg_id', done]);
    expect(doc.at(-1)).toMatchObject({ from: 'run', to: 'done' });
  });

  it('wait: {queue, msg_id, state, status}, exit by the outcome', async () => {
    const ok = await json(['wait', done, '--timeout', '5']);
    expect(ok).toEqual({ code: 0, doc: { queue: 'jq', msg_id: shortId(done), state: 'done', status: 'done - done sleeping' } });
    const failed = await json(['wait', err, '--timeout', '5']);
    expect(failed).toEqual({ code: 1, doc: { queue: 'jq', msg_id: shortId(err), state: 'err', status: 'err - by design' } });
    // A prep message never finishes by itself: timed out at once.
    expect(await json(['wait', attached, '--timeout', '0'])).toEqual({ code: 4, doc: { error: 'timed out', code: 'RQ_ERR_WAIT_TIMED_OUT' } });
  });
});

describe('documents on a queue, the root and rq-mgr', () => {
  it('queues: [{queue, status, counts}]', async () => {
    const { code, doc } = await json(['queues']);
    expect(code).toBe(0);
    expect(doc).toEqual([{ queue: 'jq', status: 'UP', counts: expect.objectContaining({ done: 1, err: 1, prep: 1 }) }]);
  });

  it('ls: {total, messages: [{msg_id, state, …}]}', async () => {
    const { doc } = await json(['ls', 'jq', '--state', 'done']);
    expect(doc.total).toBe(1);
    expect(doc.messages[0]).toMatchObject({ msg_id: shortId(done), state: 'done' });
  });

  it('running and waiting: arrays', async () => {
    expect((await json(['running', '--queue', 'jq'])).doc).toEqual([]);
    expect((await json(['waiting', '--queue', 'jq'])).doc).toEqual([]);
  });

  it('tags, tagged, tracked', async () => {
    expect((await json(['tags', '--queue', 'jq'])).doc).toEqual({ nightly: 1 });
    const tagged = (await json(['tagged', '--tag', 'nightly'])).doc;
    expect(tagged).toMatchObject({ total: 1, messages: [{ queue: 'jq', msg_id: shortId(done), state: 'done' }] });
    expect((await json(['tracked'])).doc).toMatchObject({ total: 0, messages: [] });
  });

  it('stats and failed', async () => {
    const stats = (await json(['stats', 'jq'])).doc;
    expect(stats).toEqual(expect.objectContaining({ queue: 'jq' }));
    expect((await json(['failed', 'jq'])).doc).toEqual({ err: 1 });
    const group = (await json(['failed', 'jq', '--group', 'err'])).doc;
    expect(group).toMatchObject({ total: 1, messages: [{ msg_id: shortId(err) }] });
  });

  it('limits: the table from rq-mgr', async () => {
    expect((await json(['limits'])).doc).toEqual({});
  });
});

describe('refusals and errors', () => {
  const missing = () => `jq/${shortId(done).replace(/\d+$/, '1')}`;

  it("a queue's fail reply is {error, code}, with the classic exit code", async () => {
    for (const c of ['state', 'statusmesg', 'statuscountmesg', 'attachstatusmesg', 'history']) {
      const { code, doc } = await json([c, '--msg_id', missing()]);
      expect(code, c).toBe(1);
      expect(doc, c).toEqual({ error: 'msg not found', code: 'RQ_ERR_NO_SUCH_MSG' });
    }
    expect(await json(['wait', missing(), '--timeout', '1'])).toEqual({ code: 6, doc: { error: 'msg not found', code: 'RQ_ERR_NO_SUCH_MSG' } });
  });

  it("a DOWN queue's refusal is {error, code} too", async () => {
    const down = path.join(t.root, 'config', 'jq.down');
    await fs.writeFile(down, '');
    try {
      // Listings, tags and stats are answered while DOWN; a message's own commands are not (spec §5.2).
      for (const args of [
        ['state', '--msg_id', done],
        ['statusmesg', '--msg_id', done],
        ['wait', done, '--timeout', '0'],
      ]) {
        expect(await json(args), args[0]).toEqual({ code: 1, doc: { error: 'status: DOWN', code: 'RQ_ERR_QUEUE_DOWN' } });
      }
    } finally {
      await fs.rm(down);
    }
  });

  it('problems before the queue is asked stay one stderr line, nothing on stdout', async () => {
    const usage = await rq(['state', '--msg_id', 'nonsense', '--json']);
    expect(usage).toMatchObject({ code: 2, out: [] });
    const noQueue = await rq(['ls', 'nosuch', '--json']);
    expect(noQueue).toMatchObject({ code: 1, out: [] });
    expect(noQueue.err[0]).toMatch(/^rq: queue not found: nosuch/);
  });
});
