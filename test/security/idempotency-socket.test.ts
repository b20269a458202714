// Idempotent creates over the queue socket and the CLI: same key, same id; keys per queue; a deleted
// message frees its key; keys survive a SIGKILL of the queue and expire with their window.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { PROJECT, QueueProc, waitFor } from '../helpers/rq-root.js';
import { messageIds, supervisedPids } from './fuzz-helpers.js';
import { runCleanups, shortId, webRoot, queueRoot, q, journal } from './idempotency-helpers.js';

afterEach(runCleanups);

describe('idempotency keys over the queue socket', () => {
  it('same key: same id, one message; keys are per queue; a deleted message frees its key; bad keys are refused', async () => {
    const { t } = await queueRoot(['test', 'other']);
    const create = (queue: string, fields: Record<string, unknown>, command = 'create_message') => q(t.root, queue, command, { dest: queue, ...fields });

    const [, a] = await create('test', { idempotency_key: 'same' });
    expect(await create('test', { idempotency_key: 'same' })).toEqual(['ok', a]);
    // The key is what matters, not the fields: a second create with other params still answers the first.
    expect(await create('test', { idempotency_key: 'same', param1: 'other' })).toEqual(['ok', a]);
    const [, b] = await create('test', { idempotency_key: 'different' });
    expect(b).not.toBe(a);
    expect(await messageIds(t.root, 'test')).toEqual([shortId(a), shortId(b)].sort());

    // Keys are per queue: the same key on another queue creates there, and leaves this one alone.
    const [okOther, c] = await create('other', { idempotency_key: 'same' });
    expect(okOther).toBe('ok');
    expect(c).toMatch(/\/q\/other\//);
    expect(await messageIds(t.root, 'other')).toEqual([shortId(c)]);
    expect(await messageIds(t.root, 'test')).toEqual([shortId(a), shortId(b)].sort());

    // A prep message answers its key too, until it is deleted; then the key makes a new message.
    const [, p] = await create('test', { idempotency_key: 'prepped' }, 'prep_message');
    expect(await create('test', { idempotency_key: 'prepped' }, 'prep_message')).toEqual(['ok', p]);
    expect(await create('test', { idempotency_key: 'prepped' })).toEqual(['ok', p]);
    expect(await q(t.root, 'test', 'get_message_state', { msg_id: shortId(p) })).toEqual(['ok', 'prep']);
    expect(await q(t.root, 'test', 'delete_message', { msg_id: shortId(p) })).toEqual(['ok', 'msg deleted']);
    const [, p2] = await create('test', { idempotency_key: 'prepped' });
    expect(p2).not.toBe(p);
    expect(await messageIds(t.root, 'test')).toEqual([shortId(a), shortId(b), shortId(p2)].sort());

    // An empty or null key is no key: each such create makes its own message.
    const before = await messageIds(t.root, 'test');
    const [, e1] = await create('test', { idempotency_key: '' });
    const [, e2] = await create('test', { idempotency_key: '' });
    const [, n1] = await create('test', { idempotency_key: null });
    expect(new Set([e1, e2, n1]).size).toBe(3);
    expect(await messageIds(t.root, 'test')).toHaveLength(before.length + 3);

    // 255 printable characters is the longest key; longer, with a control character, starting with a
    // space or not a string is refused naming the field, and creates nothing.
    const longest = 'k'.repeat(255);
    const [, l] = await create('test', { idempotency_key: longest });
    expect(await create('test', { idempotency_key: longest })).toEqual(['ok', l]);
    const kept = await messageIds(t.root, 'test');
    for (const bad of ['k'.repeat(256), 'k'.repeat(300), 'a\nb', 'tab\there', ' leading', 'nul\u0000', 42, ['k'], { k: 1 }]) {
      for (const command of ['create_message', 'prep_message', 'single_que']) {
        const r = await create('test', { idempotency_key: bad }, command);
        expect(r, `${command} with key ${JSON.stringify(bad)}`).toEqual([
          'fail',
          expect.stringMatching(/^idempotency_key: expected a key of 1 to 255 printable characters/),
        ]);
      }
    }
    expect(await messageIds(t.root, 'test')).toEqual(kept);
    expect(await messageIds(t.root, 'other')).toEqual([shortId(c)]);
  }, 60_000);

  it('keys survive a SIGKILL of the queue process: after rq-mgr restarts it, the same keys answer the same ids', async () => {
    const w = await webRoot();
    const keys = Array.from({ length: 50 }, (_, i) => `crash-${i}`);
    // Acknowledged creates only: a key is answered once its record is durable, which is what is promised.
    const ids = await Promise.all(
      keys.map(async (k) => {
        const r = await q(w.root, 'test', 'create_message', { dest: 'test', idempotency_key: k });
        expect(r[0], JSON.stringify(r)).toBe('ok');
        return r[1] as string;
      }),
    );
    const made = await messageIds(w.root, 'test');
    expect(made).toHaveLength(50);

    const pid = (await supervisedPids(w.root)).test!;
    process.kill(pid, 'SIGKILL');
    // A new process, past its start (num_messages waits for the recovery scan and the key journal).
    await waitFor(
      async () => {
        const now = (await supervisedPids(w.root)).test;
        return now !== null && now !== pid && (await q(w.root, 'test', 'num_messages', {})).que === 50;
      },
      'rq-mgr to restart the queue',
      20_000,
      50,
    );

    const again = await Promise.all(keys.map((k) => q(w.root, 'test', 'create_message', { dest: 'test', idempotency_key: k })));
    expect(again).toEqual(ids.map((id) => ['ok', id]));
    expect(await messageIds(w.root, 'test')).toEqual(made);
  }, 60_000);

  it('a key resent while its prep message is being committed answers that message (after a restart, commit reads it from disk)', async () => {
    const { t, procs } = await queueRoot(['test']);
    const [, id] = await procs.test.cmd('prep_message', { dest: 'test', idempotency_key: 'k' });
    await procs.test.stop();
    procs.test = await QueueProc.start(t.root, 'test');
    const [commit, again] = await Promise.all([
      procs.test.cmd('commit_message', { msg_id: id.split('/').pop() }),
      procs.test.cmd('create_message', { dest: 'test', idempotency_key: 'k' }),
    ]);
    expect(commit).toEqual(['ok', 'msg commited']);
    expect(again).toEqual(['ok', id]);
    expect(await messageIds(t.root, 'test')).toEqual([id.split('/').pop()]);
  });

  it('a key older than the window makes a new message; one within it is honoured; the journal is rewritten without expired lines', async () => {
    const { t, procs } = await queueRoot(['test']);
    const [, a] = await q(t.root, 'test', 'create_message', { dest: 'test', idempotency_key: 'old' });
    const [, b] = await q(t.root, 'test', 'create_message', { dest: 'test', idempotency_key: 'recent' });
    await procs.test.stop();

    // The journal as two days of use would have left it (written here: waiting out a window is not a test),
    // with a last line cut short by a crash mid-append.
    const file = queuePaths(t.root, 'test').keysFile;
    const DAY = 86_400_000;
    const writeJournal = (records: object[], tail = '') => fs.writeFile(file, records.map((r) => `${JSON.stringify(r)}\n`).join('') + tail);
    await writeJournal(
      [
        { k: 'old', id: shortId(a), at: Date.now() - 2 * DAY },
        { k: 'recent', id: shortId(b), at: Date.now() - 3_600_000 },
      ],
      '{"k":"cut","id":"2026',
    );
    procs.test = await QueueProc.start(t.root, 'test');
    // QueueProc.start waited for num_messages, which answers after the journal was loaded and rewritten.
    expect((await journal(t.root, 'test')).map((r) => r.k)).toEqual(['recent']);

    expect(await q(t.root, 'test', 'create_message', { dest: 'test', idempotency_key: 'recent' })).toEqual(['ok', b]);
    const [, a2] = await q(t.root, 'test', 'create_message', { dest: 'test', idempotency_key: 'old' });
    expect(a2).not.toBe(a);
    expect(await messageIds(t.root, 'test')).toEqual([shortId(a), shortId(b), shortId(a2)].sort());

    // idempotency_window_s from config.json sets the window: 7 days keeps the 2-day-old key and drops an 8-day-old one.
    await procs.test.stop();
    const cfgFile = path.join(t.root, 'config', 'config.json');
    await fs.writeFile(cfgFile, JSON.stringify({ ...JSON.parse(await fs.readFile(cfgFile, 'utf8')), idempotency_window_s: 7 * 86_400 }));
    await writeJournal([
      { k: 'old', id: shortId(a), at: Date.now() - 2 * DAY },
      { k: 'ancient', id: shortId(b), at: Date.now() - 8 * DAY },
    ]);
    procs.test = await QueueProc.start(t.root, 'test');
    expect((await journal(t.root, 'test')).map((r) => r.k)).toEqual(['old']);
    expect(await q(t.root, 'test', 'create_message', { dest: 'test', idempotency_key: 'old' })).toEqual(['ok', a]);
    const [, z] = await q(t.root, 'test', 'create_message', { dest: 'test', idempotency_key: 'ancient' });
    expect(z).not.toBe(b);
    expect(await messageIds(t.root, 'test')).toEqual([shortId(a), shortId(b), shortId(a2), shortId(z)].sort());
  }, 60_000);
});

describe('rq sendmesg --idempotency-key', () => {
  interface Run {
    code: number;
    out: string[];
    err: string[];
  }
  function rq(args: string[]): Promise<Run> {
    const env = { ...process.env };
    delete env.RQ_ROOT;
    return new Promise((resolve) => {
      execFile(path.join(PROJECT, 'bin', 'rq'), args, { cwd: PROJECT, env }, (err, stdout, stderr) => {
        const lines = (s: string) => s.split('\n').filter((l) => l !== '');
        resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, out: lines(stdout), err: lines(stderr) });
      });
    });
  }

  it('sent twice with one key prints the same id and makes one message; a key without a value is a usage error', async () => {
    const { t } = await queueRoot(['test']);
    const once = await rq(['sendmesg', '--dest', 'test', '--idempotency-key', 'k1', '--root', t.root]);
    expect(once.code, once.err.join('\n')).toBe(0);
    expect(once.out).toEqual([expect.stringMatching(/^ok http:\/\/127\.0\.0\.1:\d+\/q\/test\/\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/)]);
    expect(await rq(['sendmesg', '--dest', 'test', '--idempotency-key', 'k1', '--root', t.root])).toEqual(once);
    expect(await messageIds(t.root, 'test')).toEqual([shortId(once.out[0])]);

    // Last on the line, the flag has no value; `=` gives it an empty one; too long a key is refused before sending.
    for (const args of [['--idempotency-key'], ['--idempotency-key='], ['--idempotency-key', 'k'.repeat(256)]]) {
      const r = await rq(['sendmesg', '--dest', 'test', '--root', t.root, ...args]);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.out, args.join(' ')).toEqual([]);
      expect(r.err, args.join(' ')).toEqual([expect.stringMatching(/^rq: --idempotency-key: expected /)]);
    }
    expect(await messageIds(t.root, 'test')).toEqual([shortId(once.out[0])]);
  }, 60_000);
});
