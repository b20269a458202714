// Relay between two rq hosts on loopback (spec §11): real rq-mgr, web and relay processes on both sides.
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERBS_SH, waitFor } from '../helpers/rq-root.js';
import { BIN, run } from '../helpers/mgr-proc.js';
import { Host, RECORD_SH, bigFile, md5File } from './hosts.js';

// Soft-fail back-off count²·10 s scaled down (documented in docs/relay.md), inherited by both rq-mgrs.
process.env.RQ_RELAY_BACKOFF_SCALE = '0.02';

let A: Host;
let B: Host;

beforeAll(async () => {
  [A, B] = await Promise.all([
    Host.start({ queues: { test: { script: VERBS_SH } } }),
    Host.start({ queues: { test: { script: RECORD_SH }, other: { script: RECORD_SH } } }),
  ]);
}, 90_000);
afterAll(async () => {
  await Promise.all([A?.stop(), B?.stop()]);
});

/** Far copies of a local message, found by their orig_msg_id. */
async function farCopies(host: Host, queue: string, origMsgId: string) {
  return (await host.messages(queue)).filter((m) => m.orig_msg_id === origMsgId);
}

describe('relay without attachments', () => {
  it('sendmesg --relay-ok delivers through the relay queue: prep, commit, relayed <far id>', async () => {
    const { stdout } = await run(BIN('rq'), [
      'sendmesg',
      '--root',
      A.root,
      '--dest',
      B.url('test'),
      '--relay-ok',
      '--src',
      'cli',
      '--param1',
      'one',
      '--param2',
      'two',
      '--max_count',
      '7',
    ]);
    const full = stdout.trim().replace(/^ok /, '');
    expect(full).toMatch(new RegExp(`^http://127.0.0.1:${A.port}/q/relay/`));
    const id = full.split('/').pop()!;
    const local = await A.waitState('relay', id, ['relayed', 'err']);
    expect(local.state).toBe('relayed');
    const farFull = local.status.replace(/^relayed - /, '');
    expect(farFull).toMatch(new RegExp(`^http://127.0.0.1:${B.port}/q/test/\\d{8}\\.`));
    const far = await B.waitState('test', farFull.split('/').pop()!, ['done']);
    expect(far).toMatchObject({ dest: B.url('test'), src: 'cli', param1: 'one', param2: 'two', count: 1, max_count: 7, orig_msg_id: full });
    expect(far.force_remote).toBeUndefined();
    // The far id was stored durably before the commit, and stays with the message.
    expect((await fs.readFile(path.join(A.root, local.path, 'job', 'relay_id'), 'utf8')).trim()).toBe(farFull);
  });

  it('honours the far host relative_root', async () => {
    const C = await Host.start({ config: { relative_root: '/therq' }, queues: { test: { script: RECORD_SH } } });
    try {
      const id = await A.send('relay', { dest: `${C.base}/q/test`, param1: 'rooted' });
      const local = await A.waitState('relay', id, ['relayed', 'err']);
      expect(local.status).toMatch(new RegExp(`^relayed - http://127.0.0.1:${C.port}/therq/q/test/`));
      const far = await farCopies(C, 'test', A.fullId('relay', id));
      expect(far).toHaveLength(1);
    } finally {
      await C.stop();
    }
  }, 60_000);

  it('POST /q/relay/new_messages relays a batch, each message to its own dest; a dest the relay cannot deliver refuses the batch', async () => {
    const post = (messages: unknown[]) =>
      fetch(`${A.base}/q/relay/new_messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(messages) });
    const before = (await A.messages('relay')).length;
    const expected = 'an http(s)://host[:port][/root]/q/<queue> URL or fleet:<queue> (where the relay delivers the message)';
    for (const [i, dest, shown] of [
      [1, undefined, 'nothing'],
      [1, 'test', '"test"'],
      [1, 'relay', '"relay"'],
      [1, 'ftp://127.0.0.1/q/test', '"ftp://127.0.0.1/q/test"'],
    ] as const) {
      const res = await post([{ dest: B.url('test') }, { dest, param1: 'bad' }]);
      expect({ status: res.status, body: await res.json() }).toEqual({
        status: 400,
        body: ['fail', `messages[${i}]: dest: expected ${expected}, received ${shown}`],
      });
    }
    const noQueue = await post([{ dest: `${B.base}/nothing/here` }]);
    expect(await noQueue.json()).toEqual([
      'fail',
      `messages[0]: dest: expected an http(s)://host[:port][/root]/q/<queue> URL, received "${B.base}/nothing/here" (no /q/<queue> in the path)`,
    ]);
    // Checked by the queue, as a single create is: a pool needs this host in a fleet.
    const pool = await post([{ dest: B.url('test') }, { dest: 'fleet:test' }]);
    expect(pool.status).toBe(400);
    expect(((await pool.json()) as string[])[1]).toMatch(/^messages\[1\]: dest: expected a queue name or an http\(s\) URL \(fleet:<queue> needs/);
    expect(await A.messages('relay')).toHaveLength(before);

    const res = await post([
      { dest: B.url('test'), param1: 'batch-a' },
      { dest: B.url('other'), param1: 'batch-b' },
    ]);
    expect(res.status).toBe(200);
    const [, replies] = (await res.json()) as [string, [string, string][]];
    for (const [i, q] of ['test', 'other'].entries()) {
      const [ok, full] = replies[i];
      expect(ok).toBe('ok');
      const local = await A.waitState('relay', full.split('/').pop()!, ['relayed', 'err']);
      expect(local).toMatchObject({ state: 'relayed', dest: B.url(q) });
      const [far] = await farCopies(B, q, full);
      expect(far.param1).toBe(`batch-${'ab'[i]}`);
    }
  });

  it('carries force_remote into the relay queue and logs it; the far copy does not carry it', async () => {
    const { stdout } = await run(BIN('rq'), ['sendmesg', '--root', A.root, '--dest', B.url('test'), '--relay-ok', '--force_remote', '--param1', 'forced']);
    const id = stdout.trim().split('/').pop()!;
    const local = await A.waitState('relay', id, ['relayed', 'err']);
    expect(local.state).toBe('relayed');
    expect(local.force_remote).toBe(true);
    // The classic relay's lines (spec §11.1; drudru's relay_script.rb): `FORCE REMOTE`, then `attempting remote <far queue URL>` before the prep.
    const log = (await A.stdio('relay', id)).split('\n');
    const force = log.findIndex((l) => / - FORCE REMOTE$/.test(l));
    const attempt = log.findIndex((l) => l.endsWith(` - attempting remote ${B.url('test')}`));
    expect(force, log.join('\n')).toBeGreaterThan(0);
    expect(attempt, log.join('\n')).toBeGreaterThan(force);
    const [far] = await farCopies(B, 'test', local.orig_msg_id);
    expect(far.param1).toBe('forced');
    expect(far.force_remote).toBeUndefined();
  });

  it('a dup to an http dest from a script goes through the local relay to the far queue, its trace context with it', async () => {
    const trace = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'congo=t61rcWkgMzE' };
    const id = await A.send('test', { dest: 'test', param1: 'dup', param2: B.url('other'), src: 'dupper', ...trace });
    const done = await A.waitState('test', id, ['done', 'err']);
    expect(done.status).toMatch(new RegExp(`^done - ok http://127.0.0.1:${A.port}/q/relay/`));
    const relayId = done.status.split('/').pop();
    const relayed = await A.waitState('relay', relayId, ['relayed', 'err']);
    expect(relayed).toMatchObject({ state: 'relayed', ...trace });
    // The listing walks the states one by one: a copy moving que → run → done meanwhile can be missed once.
    const far = await waitFor(async () => {
      const copies = await farCopies(B, 'other', done.orig_msg_id);
      return copies.length === 1 && copies[0].state === 'done' ? copies : false;
    }, 'one far copy, done');
    expect(far[0]).toMatchObject({ src: 'dupper', param1: 'dup', dest: B.url('other'), state: 'done', ...trace });
  });

  it('refuses a relay loop with the brightroll text', async () => {
    const id = await A.send('relay', { dest: A.url('relay') });
    const m = await A.waitState('relay', id, ['err', 'relayed']);
    expect(m.status).toBe('err - Relay loop detected: RQ_DEST queue same as RQ_ORIG_MSG_ID');
    // A dest naming any relay queue can only go round: refused too.
    const id2 = await A.send('relay', { dest: B.url('relay'), orig_msg_id: 'http://elsewhere/q/x/1' });
    expect((await A.waitState('relay', id2, ['err', 'relayed'])).status).toBe('err - Relay loop detected: RQ_DEST queue is relay');
    expect(await farCopies(B, 'relay', 'http://elsewhere/q/x/1')).toHaveLength(0);
  });

  it('a far queue that does not exist is retried with back-off and ends in err at max_count', async () => {
    const id = await A.send('relay', { dest: B.url('nosuchqueue'), max_count: 3 });
    const m = await A.waitState('relay', id, ['err'], 30_000);
    expect(m.status).toBe('err - HIT MAX RESEND COUNT - MOVING TO ERR');
    expect(m.count).toBe(3);
    expect(await A.stdio('relay', id)).toMatch(/soft fail, resend in \d+ s: prep: HTTP 404/);
  }, 40_000);
});

describe('relay with attachments', () => {
  it('uploads every attachment, md5-checked, and the far copy has the same bytes', async () => {
    const dir = await fs.mkdtemp(path.join(A.root, 'files-'));
    await fs.writeFile(path.join(dir, 'small.txt'), 'hello relay\n');
    await fs.writeFile(path.join(dir, 'quote"name.bin'), Buffer.from([0, 1, 2, 255, 13, 10, 45, 45]));
    const prep = await A.q('relay', 'prep_message', { dest: B.url('test'), param1: 'attached' });
    const id = String(prep[1]).split('/').pop()!;
    for (const f of ['small.txt', 'quote"name.bin']) expect((await A.q('relay', 'attach_message', { msg_id: id, pathname: path.join(dir, f) }))[0]).toBe('ok');
    expect((await A.q('relay', 'commit_message', { msg_id: id }))[0]).toBe('ok');
    const local = await A.waitState('relay', id, ['relayed', 'err']);
    expect(local.state).toBe('relayed');
    const [far] = await farCopies(B, 'test', local.orig_msg_id);
    expect(Object.keys(far._attachments).sort()).toEqual(['quote"name.bin', 'small.txt']);
    for (const f of ['small.txt', 'quote"name.bin']) {
      expect(far._attachments[f].md5).toBe(local._attachments[f].md5);
      expect(await fs.readFile(far._attachments[f].path)).toEqual(await fs.readFile(path.join(dir, f)));
    }
  });

  it('streams a 200 MB attachment; md5 verified on the far side', async () => {
    const file = path.join(A.root, 'big.bin');
    const md5 = await bigFile(file, 200);
    const prep = await A.q('relay', 'prep_message', { dest: B.url('test'), param1: 'big' });
    const id = String(prep[1]).split('/').pop()!;
    expect(await A.q('relay', 'attach_message', { msg_id: id, pathname: file })).toEqual(['ok', `${md5}-Attached successfully`]);
    await fs.rm(file);
    expect((await A.q('relay', 'commit_message', { msg_id: id }))[0]).toBe('ok');
    const local = await A.waitState('relay', id, ['relayed', 'err'], 60_000);
    expect(local.state).toBe('relayed');
    const [far] = await farCopies(B, 'test', local.orig_msg_id);
    expect(far._attachments['big.bin']).toMatchObject({ md5, size: 200 * 1048576 });
    expect(await md5File(far._attachments['big.bin'].path)).toBe(md5);
    expect(await A.stdio('relay', id)).toMatch(/attached big\.bin: \d+ bytes in \d+ ms/);
  }, 90_000);
});

describe('failures', () => {
  it('far host down: the message waits with back-off, then is delivered exactly once', async () => {
    await B.down();
    const id = await A.send('relay', { dest: B.url('test'), param1: 'while-down' });
    // Several soft fails with growing delays while B is away: the message as seen waiting, not read again
    // (its short back-off may have run it once more by then).
    let waiting: { status: string; due: number; seenAt: number };
    try {
      waiting = await waitFor(
        async () => {
          const m = (await A.q('relay', 'get_message', { msg_id: id }))[1];
          return m.count >= 3 && m.state === 'que' && { ...m, seenAt: Date.now() / 1000 };
        },
        'three soft fails',
        30_000,
        50,
      );
    } finally {
      await B.up();
    }
    expect(waiting.status).toMatch(/^que - \d+-prep: .*ECONNREFUSED/);
    expect(waiting.due).toBeGreaterThan(waiting.seenAt - 1);
    const local = await A.waitState('relay', id, ['relayed', 'err'], 40_000);
    expect(local.state).toBe('relayed');
    const far = await farCopies(B, 'test', local.orig_msg_id);
    expect(far).toHaveLength(1);
    expect(far[0].count).toBe(local.count + 1);
  }, 90_000);

  it('a lost commit reply does not make a second far copy: the state of the stored far id decides', async () => {
    const proxy = await dropFirstCommitReply(B.port);
    try {
      const id = await A.send('relay', { dest: `http://127.0.0.1:${proxy.port}/q/test`, param1: 'lost-reply' });
      const local = await A.waitState('relay', id, ['relayed', 'err'], 30_000);
      expect(proxy.dropped()).toBe(1);
      expect(local.state).toBe('relayed');
      expect(local.count).toBe(1);
      const far = await farCopies(B, 'test', local.orig_msg_id);
      expect(far).toHaveLength(1);
      expect(local.status).toBe(`relayed - ${B.url('test')}/${far[0].msg_id}`);
      expect(await A.stdio('relay', id)).toMatch(/already (que|run|done): an earlier attempt committed it/);
    } finally {
      await proxy.close();
    }
  }, 40_000);
});

/**
 * An HTTP proxy to the far web process that forwards everything, but for the first commit
 * (`_method=commit`) it lets the far host commit and then cuts the connection instead of
 * passing the reply on: the relay sees a reset, the far message is committed.
 */
async function dropFirstCommitReply(farPort: number): Promise<{ port: number; dropped: () => number; close: () => Promise<void> }> {
  let dropped = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const drop = dropped === 0 && req.method === 'POST' && body.toString().includes('_method=commit');
      const up = http.request({ host: '127.0.0.1', port: farPort, path: req.url, method: req.method, headers: req.headers }, (upRes) => {
        if (drop) {
          dropped++;
          upRes.resume();
          upRes.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    dropped: () => dropped,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
