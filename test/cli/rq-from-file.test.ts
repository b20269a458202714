// rq sendmesg --from-file: JSON lines or an array, checked whole before any is sent, batches of create_messages, one reply line per message; against the real bin/rq and queue.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Run, expectOneLineError, runRq } from '../helpers/rq-cli.js';
import { QueueProc, type TestRoot, addQueue, makeRoot } from '../helpers/rq-root.js';
import { fillDisk, mountTmpfs } from '../helpers/disk-fill.js';
import { readMessages } from '../../src/cli/rq-from-file.js';

let t: TestRoot;
let q: QueueProc;
let dir: string;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'bulk');
  // Paused: what a file made stays in que/ to be counted and read.
  await fs.writeFile(path.join(t.root, 'config', 'bulk.pause'), '');
  q = await QueueProc.start(t.root, 'bulk');
  dir = path.join(t.root, 'work');
  await fs.mkdir(dir);
});
afterAll(async () => {
  await q?.stop();
  await t?.cleanup();
});

const rq = (args: string[], input?: string): Promise<Run> => runRq(['sendmesg', '--dest', 'bulk', ...args], { root: t.root, cwd: dir, input });
const queued = async (): Promise<number> => (await q.cmd('num_messages')).que;
const ID = /^ok http:\/\/127\.0\.0\.1:\d+\/q\/bulk\/(\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+)$/;
const lines = (n: number, from = 0) => Array.from({ length: n }, (_, i) => JSON.stringify({ param1: `m${from + i}` }));

describe('rq sendmesg --from-file', () => {
  it('sends every line of a JSON-lines file in order, over batches, the options as defaults a line may override', async () => {
    const before = await queued();
    const text = [...lines(2400), JSON.stringify({ param1: 'm2400', param2: 'own', dest: 'bulk' })].join('\n');
    await fs.writeFile(path.join(dir, 'msgs.jsonl'), `${text}\n\n`);
    const r = await rq(['--from-file', 'msgs.jsonl', '--param2', 'default']);
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(r.err).toEqual([]);
    expect(r.out).toHaveLength(2401);
    const ids = r.out.map((l) => ID.exec(l)?.[1]);
    expect(ids.every(Boolean)).toBe(true);
    expect(new Set(ids).size).toBe(2401);
    expect(await queued()).toBe(before + 2401);
    for (const [i, param2] of [
      [0, 'default'],
      [1999, 'default'],
      [2000, 'default'],
      [2400, 'own'],
    ] as const) {
      expect((await q.cmd('get_message', { msg_id: ids[i] }))[1]).toMatchObject({ param1: `m${i}`, param2, state: 'que' });
    }
  });

  it('cuts batches by size too: 700 messages of 100 KiB (68 MiB, past the socket frame limit as one batch) all made, in order', async () => {
    const before = await queued();
    const body = (i: number) => String.fromCharCode(97 + (i % 26)).repeat(100 * 1024);
    await fs.writeFile(path.join(dir, 'large.jsonl'), Array.from({ length: 700 }, (_, i) => JSON.stringify({ param1: `L${i}`, param2: body(i) })).join('\n'));
    const r = await rq(['--from-file', 'large.jsonl']);
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(r.out).toHaveLength(700);
    expect(await queued()).toBe(before + 700);
    const last = ID.exec(r.out[699])![1];
    const m = (await q.cmd('get_message', { msg_id: last }))[1];
    expect(m.param1).toBe('L699');
    expect(m.param2).toBe(body(699));
  }, 120_000);

  it('reads a JSON array from stdin with -', async () => {
    const r = await rq(['--from-file', '-'], JSON.stringify([{ param1: 'a' }, { param1: 'b' }]));
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(r.out).toHaveLength(2);
    const second = ID.exec(r.out[1])![1];
    expect((await q.cmd('get_message', { msg_id: second }))[1]).toMatchObject({ param1: 'b' });
  });

  it('refuses a file with one bad message, naming its line, and sends none', async () => {
    const before = await queued();
    const write = (name: string, text: string) => fs.writeFile(path.join(dir, name), text);
    await write('bad-field.jsonl', [...lines(2), JSON.stringify({ count: 'many' })].join('\n'));
    expectOneLineError(await rq(['--from-file', 'bad-field.jsonl']), /^rq: bad-field\.jsonl:3: count: expected a whole number >= 0, received "many"$/, 2);
    // A misspelt field, refused as over HTTP: sent, the message would run without the limit it meant.
    await write('typo.jsonl', [...lines(1), JSON.stringify({ param1: 'x', memroy_max: '64M' })].join('\n'));
    expectOneLineError(await rq(['--from-file', 'typo.jsonl']), /^rq: typo\.jsonl:2: memroy_max: unknown field; did you mean "memory_max"\?$/, 2);
    // A batch makes every message ready to run: one meant to wait in prep is refused, not run.
    await write('prep.jsonl', [...lines(1), JSON.stringify({ param1: 'x', _method: 'prep' })].join('\n'));
    expectOneLineError(
      await rq(['--from-file', 'prep.jsonl']),
      /^rq: prep\.jsonl:2: _method: expected commit or nothing: a batch makes every message ready to run/,
      2,
    );
    await write('bad-json.jsonl', `${lines(1)[0]}\n{"param1": \n`);
    expectOneLineError(await rq(['--from-file', 'bad-json.jsonl']), /^rq: bad-json\.jsonl:2: expected a JSON object per line \(/, 2);
    await write('other-dest.jsonl', JSON.stringify({ dest: 'elsewhere' }));
    expectOneLineError(
      await rq(['--from-file', 'other-dest.jsonl']),
      /^rq: other-dest\.jsonl:1: dest: expected "bulk" \(the --dest of the command\) or none, received "elsewhere"$/,
      2,
    );
    await write('array.json', JSON.stringify([{ param1: 'ok' }, 5]));
    expectOneLineError(await rq(['--from-file', 'array.json']), /^rq: array\.json\[1\]: expected a JSON object of message fields, received 5$/, 2);
    await write('empty.jsonl', '\n');
    expectOneLineError(await rq(['--from-file', 'empty.jsonl']), /^rq: empty\.jsonl: expected at least one message, received none$/, 2);
    expectOneLineError(await rq(['--from-file', 'missing.jsonl']), /^rq: --from-file: cannot read "missing\.jsonl" \(ENOENT\)$/, 2);
    expectOneLineError(await rq(['--from-file', 'array.json', '--wait=5']), /^rq: --from-file: expected neither --idempotency-key nor --wait/, 2);
    expect(await queued()).toBe(before);
  });

  it('a batch the queue refuses stops the sending: the lines printed are the messages made, the refusal names the line', async () => {
    const before = await queued();
    // A dependency on a message that does not exist is refused by the queue, not by the fields alone.
    const text = [...lines(2100), JSON.stringify({ depends: ['bulk/20200101.0000.00.000.1'] })].join('\n');
    await fs.writeFile(path.join(dir, 'late.jsonl'), text);
    const r = await rq(['--from-file', 'late.jsonl']);
    expect(r.code).toBe(1);
    expect(r.out).toHaveLength(2000);
    expect(r.out.every((l) => ID.test(l))).toBe(true);
    expect(r.err).toEqual([
      expect.stringMatching(
        /^rq: late\.jsonl:2101: depends\b.*20200101\.0000\.00\.000\.1.* \(none of the messages from late\.jsonl:2001 to late\.jsonl:2101 was made; 2000 messages were made, the ok lines printed\)$/,
      ),
    ]);
    expect(await queued()).toBe(before + 2000);
  });

  it('a refused first batch: the batch in flight after it is still made, and its lines are the ones printed', async () => {
    const before = await queued();
    const list = lines(4000);
    list[1499] = JSON.stringify({ param1: 'm1499', depends: ['bulk/20200101.0000.00.000.1'] });
    await fs.writeFile(path.join(dir, 'early.jsonl'), list.join('\n'));
    const r = await rq(['--from-file', 'early.jsonl']);
    expect(r.code).toBe(1);
    expect(r.err).toEqual([
      expect.stringMatching(
        /^rq: early\.jsonl:1500: depends\b.* \(none of the messages from early\.jsonl:1 to early\.jsonl:2000 was made; 2000 messages were made, the ok lines printed\)$/,
      ),
    ]);
    expect(r.out).toHaveLength(2000);
    expect((await q.cmd('get_message', { msg_id: ID.exec(r.out[0])![1] }))[1]).toMatchObject({ param1: 'm2000' });
    expect(await queued()).toBe(before + 2000);
  });

  it('a queue that does not answer: exit 3, and the text says the messages were not sent', async () => {
    const stopped = path.join(t.root, 'queues', 'gone');
    await fs.mkdir(stopped, { recursive: true });
    await fs.writeFile(path.join(dir, 'two.jsonl'), lines(2).join('\n'));
    const r = await runRq(['sendmesg', '--dest', 'gone', '--from-file', 'two.jsonl'], { root: t.root, cwd: dir });
    expectOneLineError(
      r,
      /^rq: queue gone: its process does not answer \(.*\): the messages from two\.jsonl:1 to two\.jsonl:2 were not sent; 0 messages were made, the ok lines printed$/,
      3,
    );
  });

  it('a byte order mark is skipped; a message over several lines is refused with what to do instead', async () => {
    await fs.writeFile(path.join(dir, 'bom.jsonl'), `\uFEFF${lines(1)[0]}\n`);
    const ok = await rq(['--from-file', 'bom.jsonl']);
    expect(ok.code, ok.err.join('\n')).toBe(0);
    await fs.writeFile(path.join(dir, 'pretty.jsonl'), '{\n  "param1": "x"\n}\n');
    expectOneLineError(
      await rq(['--from-file', 'pretty.jsonl']),
      /^rq: pretty\.jsonl:1: expected a JSON object per line \(.*\); a file with a message over several lines must be one JSON array$/,
      2,
    );
  });
});

describe('readMessages: the trace context', () => {
  it("a message's own traceparent or tracestate wins whole over the command's (its flags or environment); the others take the command's", () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const own = '01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00';
    const text = [{ param1: 'a' }, { param1: 'b', traceparent: own }].map((m) => JSON.stringify(m)).join('\n');
    expect(readMessages(text, 'f', { dest: 'bulk', traceparent, tracestate: 'env=1' }).map((i) => i.fields)).toEqual([
      { dest: 'bulk', param1: 'a', traceparent, tracestate: 'env=1' },
      { dest: 'bulk', param1: 'b', traceparent: own },
    ]);
  });
});

describe('rq sendmesg --from-file on a disk that fills (a tmpfs under queues/)', () => {
  let full: TestRoot;
  let fq: QueueProc | undefined;
  let unmount: (() => Promise<void>) | undefined;
  let mountError = '';

  beforeAll(async () => {
    full = await makeRoot();
    try {
      unmount = await mountTmpfs(path.join(full.root, 'queues'), '8m', 'rq-from-file-disk');
    } catch (err) {
      mountError = (err as Error).message.trim();
      return;
    }
    await addQueue(full.root, 'bulk');
    await fs.writeFile(path.join(full.root, 'config', 'bulk.pause'), '');
    fq = await QueueProc.start(full.root, 'bulk');
  });
  afterAll(async () => {
    await fq?.stop();
    await unmount?.();
    await full?.cleanup();
  });

  it('messages the queue could not make: their fail lines in order, stderr names each by its line and counts, exit 1', async (ctx) => {
    if (mountError) return ctx.skip(`cannot mount a tmpfs here (${mountError})`);
    const filler = path.join(full.root, 'queues', 'filler');
    fillDisk(filler);
    // Room for a few messages of 10 KB, not for 200.
    await fs.truncate(filler, (await fs.stat(filler)).size - 96 * 1024);
    const file = path.join(full.root, 'config', 'many.jsonl');
    await fs.writeFile(file, Array.from({ length: 200 }, (_, i) => JSON.stringify({ param1: `m${i}`, param2: 'x'.repeat(10_000) })).join('\n'));
    const r = await runRq(['sendmesg', '--dest', 'bulk', '--from-file', file], { root: full.root });
    expect(r.code).toBe(1);
    expect(r.out).toHaveLength(200);
    const made = r.out.map((l, i) => [l, i] as const).filter(([l]) => ID.test(l));
    const lost = r.out.map((l, i) => [l, i] as const).filter(([l]) => !ID.test(l));
    expect(made.length).toBeGreaterThan(0);
    expect(lost.length).toBeGreaterThan(0);
    for (const [l] of lost) expect(l).toMatch(/^fail create message failed: ENOSPC/);
    // stderr: each failed message by its line, then the account.
    expect(r.err).toEqual([
      ...lost.map(([, i]) => expect.stringMatching(new RegExp(`^rq: ${file.replace(/[.]/g, '\\.')}:${i + 1}: create message failed: ENOSPC`))),
      `rq: ${lost.length} of 200 messages were not made (listed above); ${made.length} were made, the ok lines printed`,
    ]);
    // On disk: exactly the ok lines' messages.
    expect((await fq!.cmd('num_messages')).que).toBe(made.length);
    await fs.rm(filler);
  });
});
