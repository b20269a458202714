// bin/rq against a live root: sendmesg and the message status commands, and prepmesg, attachmesg, commitmesg, attachstatusmesg and clone.
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOneLineError } from '../helpers/rq-cli.js';
import { FULLID, cliRoot, shortId } from './rq-root-harness.js';

const s = cliRoot();
const { rq, send } = s;

describe('rq sendmesg and message status', () => {
  it('sends, then reports status, state and count', async () => {
    const id = await send('--param1', 'done');
    await s.test.waitState(shortId(id), ['done']);
    expect(await rq(['statusmesg', '--msg_id', id])).toEqual({ code: 0, out: ['ok done - done sleeping'], err: [] });
    expect(await rq(['state', '--msg_id', id])).toEqual({ code: 0, out: ['ok done'], err: [] });
    expect(await rq(['statuscountmesg', '--msg_id', id])).toEqual({ code: 0, out: ['ok 0'], err: [] });
  });

  it('accepts --k=v and --k v, sends values as given and a bare --force_remote as true', async () => {
    const id = await send('--param1=done', '--param2', 'two words', '--src=me=you', '--count', '2', '--max_count=9', '--force_remote');
    const msg = await s.test.waitState(shortId(id), ['done']);
    expect(msg).toMatchObject({ dest: 'test', param1: 'done', param2: 'two words', src: 'me=you', count: 2, max_count: 9, force_remote: true });
  });

  it('takes the run-policy flags (rq-beyond §B1.10) and sends them as the message fields', async () => {
    const id = await send(
      '--param1',
      'done',
      '--retries',
      '3',
      '--backoff_base=0.5',
      '--min_retry_delay',
      '0',
      '--max_retry_delay',
      '60',
      '--retry_jitter',
      '0',
      '--timeout',
      '30',
      '--heartbeat_timeout',
      '10',
    );
    const msg = await s.test.waitState(shortId(id), ['done']);
    expect(msg).toMatchObject({
      max_retries: 3,
      backoff_base: 0.5,
      min_retry_delay: 0,
      max_retry_delay: 60,
      retry_jitter: 0,
      timeout: 30,
      heartbeat_timeout: 10,
    });
    expect(msg).not.toHaveProperty('retries');
  });

  it('takes the run limit flags, sizes as people write them, and refuses a bad one naming the flag, sending nothing', async () => {
    const id = await send('--param1', 'done', '--memory_max', '512M', '--cpu_max=0.5', '--pids_max', '64', '--io_weight', '50');
    const msg = await s.test.waitState(shortId(id), ['done']);
    expect(msg).toMatchObject({ memory_max: 512 * 1024 * 1024, cpu_max: 0.5, pids_max: 64, io_weight: 50 });
    const before = await s.test.cmd('num_messages');
    const bad = await rq(['sendmesg', '--dest', 'test', '--memory_max', 'lots']);
    expect(bad.code).toBe(2);
    expect(bad.err.join('\n')).toMatch(/--memory_max.*expected bytes, at least 1M.*lots/);
    expect(await s.test.cmd('num_messages')).toEqual(before);
  });

  it('counts a resend in statuscountmesg', async () => {
    const id = await send('--param1', 'resend1');
    await s.test.waitState(shortId(id), ['done'], 15_000);
    expect(await rq(['statuscountmesg', '--msg_id', id])).toEqual({ code: 0, out: ['ok 1'], err: [] });
    expect((await rq(['statusmesg', '--msg_id', id])).out).toEqual(['ok done - resent once']);
  });

  it('takes the message as the word after the command too, in any of its forms', async () => {
    const id = await send('--param1', 'done');
    await s.test.waitState(shortId(id), ['done']);
    for (const given of [id, `test/${shortId(id)}`, shortId(id)]) {
      expect(await rq(['statusmesg', given])).toEqual({ code: 0, out: ['ok done - done sleeping'], err: [] });
      expect(await rq(['statuscountmesg', given])).toEqual({ code: 0, out: ['ok 0'], err: [] });
    }
    expectOneLineError(await rq(['state', id, '--msg_id', `test/${shortId(id)}`]), /^rq: the msg_id is named twice/, 2);
  });

  it('takes <queue>/<id> as well as a full id, and prints fail replies on stdout with exit 1', async () => {
    const id = await send('--param1', 'err');
    await s.test.waitState(shortId(id), ['err']);
    expect(await rq(['state', '--msg_id', `test/${shortId(id)}`])).toEqual({ code: 0, out: ['ok err'], err: [] });
    expect(await rq(['state', '--msg_id', 'http://elsewhere:1/q/test/20200101.0000.00.000.1'])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
    expect(await rq(['statusmesg', '--msg_id', 'test/20200101.0000.00.000.1'])).toEqual({ code: 1, out: ['fail msg not found'], err: [] });
  });

  it('relays an http dest through the relay queue only with --relay-ok', async () => {
    const dest = 'http://127.0.0.1:1/q/far';
    expectOneLineError(
      await rq(['sendmesg', '--dest', dest, '--param1', 'done']),
      /^rq: cannot relay message to http:\/\/127\.0\.0\.1:1\/q\/far: add --relay-ok/,
      2,
    );
    const r = await rq(['sendmesg', '--dest', dest, '--relay-ok', '--param1', 'done']);
    expect(r.code).toBe(0);
    const id = FULLID('relay').exec(r.out[0])![1];
    expect((await s.relay.cmd('get_message', { msg_id: shortId(id) }))[1]).toMatchObject({ dest, param1: 'done' });
  });

  it('single_que answers the waiting message instead of queueing another', async () => {
    // Paused, so the first message is still waiting when the second single_que asks, however slow the machine.
    const pause = path.join(s.t.root, 'config', 'test.pause');
    await fs.writeFile(pause, '');
    expect(await s.test.cmd('status')).toEqual(['PAUSE']);
    const first = await rq(['single_que', '--dest', 'test', '--param1', 'done']);
    expect(first.out[0]).toMatch(FULLID('test'));
    const again = await rq(['single_que', '--dest', 'test', '--param1', 'done']);
    await fs.rm(pause);
    expect(await s.test.cmd('status')).toEqual(['UP']);
    expect(again).toEqual({ code: 0, out: first.out, err: [] });
    expectOneLineError(await rq(['single_que', '--dest', 'http://x:1/q/y', '--relay-ok']), /^rq: --dest: expected a local queue name/, 2);
  });
});

describe('rq prepmesg, attachmesg, commitmesg, attachstatusmesg, clone', () => {
  it('prepares, attaches a relative path, lists it and commits', async () => {
    const data = 'attachment bytes\n'.repeat(100);
    await fs.writeFile(path.join(s.workDir, 'data.txt'), data);
    const md5 = createHash('md5').update(data).digest('hex');

    const prep = await rq(['prepmesg', '--dest', 'test', '--param1', 'done']);
    expect(prep.code).toBe(0);
    const id = FULLID('test').exec(prep.out[0])![1];
    expect(await rq(['state', '--msg_id', id])).toMatchObject({ code: 0, out: ['ok prep'] });

    const att = await rq(['attachmesg', '--msg_id', id, '--pathname', 'data.txt'], { cwd: s.workDir });
    expect(att).toEqual({ code: 0, out: [`ok ${md5}-Attached successfully for Message: ${id} attachment`], err: [] });
    const named = await rq(['attachmesg', '--msg_id', id, '--pathname=./data.txt', '--name', 'other.txt'], { cwd: s.workDir });
    expect(named.code).toBe(0);

    const list = await rq(['attachstatusmesg', '--msg_id', id]);
    expect(list.code).toBe(0);
    expect(list.out[0]).toBe('ok 2');
    const lines = list.out.slice(1).sort();
    expect(lines[0]).toMatch(new RegExp(`^data\\.txt ${md5} ${data.length} /\\S+/prep/${shortId(id)}/attach/data\\.txt$`));
    expect(lines[1]).toMatch(new RegExp(`^other\\.txt ${md5} ${data.length} /\\S+/attach/other\\.txt$`));

    expect(await rq(['commitmesg', '--msg_id', id])).toEqual({ code: 0, out: ['ok msg commited'], err: [] });
    expect(await rq(['commitmesg', '--msg_id', id])).toEqual({ code: 1, out: ['fail cannot find message'], err: [] });
    const late = await rq(['attachmesg', '--msg_id', id, '--pathname', 'data.txt'], { cwd: s.workDir });
    expect(late).toEqual({ code: 1, out: [`fail cannot find message for Message: ${id} attachment`], err: [] });
    await s.test.waitState(shortId(id), ['done']);
    expect((await rq(['attachstatusmesg', '--msg_id', id])).out[0]).toBe('ok 2');
  });

  it('prints ok 0 for a message without attachments', async () => {
    const id = await send('--param1', 'done');
    expect(await rq(['attachstatusmesg', '--msg_id', id])).toEqual({ code: 0, out: ['ok 0'], err: [] });
  });

  it('clones a finished message and refuses one in prep', async () => {
    const id = await send('--param1', 'done', '--param2', 'cloned');
    await s.test.waitState(shortId(id), ['done']);
    const r = await rq(['clone', '--msg_id', id]);
    expect(r.code).toBe(0);
    const copy = FULLID('test').exec(r.out[0])![1];
    expect(copy).not.toBe(id);
    expect(await s.test.waitState(shortId(copy), ['done'])).toMatchObject({ param2: 'cloned', cloned_from: shortId(id) });

    const prep = FULLID('test').exec((await rq(['prepmesg', '--dest', 'test'])).out[0])![1];
    expect(await rq(['clone', '--msg_id', prep])).toEqual({ code: 1, out: ['fail cannot clone message in prep state'], err: [] });
  });
});
