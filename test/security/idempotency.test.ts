// Idempotent creates against real daemons: a key sent again (concurrently, after a lost reply, after a
// crash of the web or of the queue, through the socket or the CLI) answers the first message and makes
// nothing; keys are per queue, a deleted message frees its key, and keys expire with their window.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { queueCommand } from '../../src/ipc/rq1.js';
import { PROJECT, QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../helpers/rq-root.js';
import { seededRandom, testSeed } from '../helpers/seeded-random.mjs';
import type { SeededRandom } from '../helpers/seeded-random.d.mts';
import { type WebRoot, startWebRoot } from '../web/web-root.js';
import { messageIds, supervisedPids } from './fuzz-helpers.js';

const SEED = testSeed();
/**
 * Keys each of the 16 clients sends in the concurrency test. 1,000 (16,000 requests, 1,000 creates)
 * takes 6 to 12 s on 2 cores; RQ_IDEM_KEYS makes it smaller on a slower machine or larger for a soak.
 */
const KEYS = positiveEnv('RQ_IDEM_KEYS', 1000);
const CLIENTS = 16;
/** Requests one client keeps in flight: a few, as a real client with a small connection pool. */
const IN_FLIGHT = 4;

function positiveEnv(name: string, fallback: number): number {
  const given = Number(process.env[name]);
  return Number.isInteger(given) && given > 0 ? given : fallback;
}

const shortId = (fullId: string) => fullId.split('/').pop()!;

// Every test has its own root; whatever a test started is stopped here, also when it failed.
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function webRoot(queues: Record<string, object> = { test: {} }): Promise<WebRoot> {
  const w = await startWebRoot({ queues });
  cleanups.push(() => w.stop());
  // Paused, the messages stay in que/: nothing runs, so the ids counted are exactly the creates.
  for (const q of Object.keys(queues)) expect(await w.mgr.cmd('pause_queue', q)).toEqual(['ok', q]);
  return w;
}

/** A root with queue processes of its own (no rq-mgr), started paused. */
async function queueRoot(names: string[]): Promise<{ t: TestRoot; procs: Record<string, QueueProc> }> {
  const t = await makeRoot();
  const procs: Record<string, QueueProc> = {};
  cleanups.push(async () => {
    await Promise.all(Object.values(procs).map((p) => p.stop()));
    await t.cleanup();
  });
  for (const name of names) {
    await addQueue(t.root, name);
    await fs.writeFile(queuePaths(t.root, name).pauseFile, '');
    procs[name] = await QueueProc.start(t.root, name);
  }
  return { t, procs };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const q = (root: string, queue: string, command: string, arg: unknown): Promise<any> => queueCommand(queuePaths(root, queue).sock, command, arg, { timeoutMs: 10_000 });

function shuffled<T>(xs: readonly T[], rnd: SeededRandom): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rnd.int(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

interface Outcome {
  status: number;
  body: string;
}

/** POST /q/<q>/new_message with the key in mesg or in the Idempotency-Key header; rejects on a network error. */
function postCreate(port: number, queue: string, key: string, opts: { header?: boolean; agent?: http.Agent | false } = {}): Promise<Outcome> {
  const mesg: Record<string, unknown> = { dest: queue };
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (opts.header) headers['idempotency-key'] = key;
  else mesg.idempotency_key = key;
  const body = new URLSearchParams({ mesg: JSON.stringify(mesg) }).toString();
  headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: `/q/${queue}/new_message`, headers, agent: opts.agent ?? false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer within 30 s for key ${key}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The full id of a 200 `["ok", id]` answer, else null. */
function okId(o: Outcome): string | null {
  if (o.status !== 200) return null;
  const body = JSON.parse(o.body) as unknown[];
  return body[0] === 'ok' && typeof body[1] === 'string' ? body[1] : null;
}

/** Runs `work` over `items` with at most `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

async function journal(root: string, queue: string): Promise<{ k: string; id: string; at: number }[]> {
  const text = await fs.readFile(queuePaths(root, queue).keysFile, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

describe('idempotency keys over HTTP', () => {
  it(`${CLIENTS} concurrent clients sending the same ${KEYS} keys make ${KEYS} messages, and all see the same id per key`, async () => {
    const w = await webRoot();
    const master = seededRandom(SEED);
    const keys = Array.from({ length: KEYS }, (_, i) => `key-${i}`);
    // Each client sends every key once, in its own order, a few at a time over its own connections;
    // half put the key in mesg, half in the Idempotency-Key header (both reach the same queue field).
    const answers = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        const rnd = seededRandom(master.int(0x100000000));
        const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
        const got = new Map<string, string>();
        try {
          await pool(shuffled(keys, rnd), IN_FLIGHT, async (key) => {
            const o = await postCreate(w.port, 'test', key, { header: c % 2 === 1, agent });
            const id = okId(o);
            if (id === null) throw new Error(`client ${c}, key ${key}: ${o.status} ${o.body} (${master.replay})`);
            got.set(key, id);
          });
        } finally {
          agent.destroy();
        }
        return got;
      }),
    );

    const first = answers[0];
    const disagreements = answers.flatMap((got, c) => keys.filter((k) => got.get(k) !== first.get(k)).map((k) => `client ${c} key ${k}: ${got.get(k)} vs ${first.get(k)}`));
    expect(disagreements.slice(0, 5), `${disagreements.length} disagreements (${master.replay})`).toEqual([]);
    const ids = [...first.values()];
    expect(new Set(ids).size, 'one distinct id per key').toBe(KEYS);
    expect(await messageIds(w.root, 'test')).toEqual(ids.map(shortId).sort());
    // One journal record per created message: a duplicate create would have recorded its key again.
    const records = await journal(w.root, 'test');
    expect(records).toHaveLength(KEYS);
    expect(new Map(records.map((r) => [r.k, r.id]))).toEqual(new Map(keys.map((k) => [k, shortId(first.get(k)!)])));
  }, 180_000);

  it('a client that resends after the web was killed mid-batch ends with exactly one message per key', async () => {
    const w = await webRoot();
    const N = 200;
    const keys = Array.from({ length: N }, (_, i) => `batch-${i}`);
    const webPid = (await supervisedPids(w.root))['[web]'];
    expect(webPid, 'rq-mgr names the web worker [web]').toEqual(expect.any(Number));

    // The kill comes from the 20th answer, so the other requests of the pool are still in flight
    // (some already forwarded to the queue, their answer about to be lost with the web process).
    const first = new Map<string, string>();
    const unanswered: string[] = [];
    let answered = 0;
    await pool(shuffled(keys, seededRandom(SEED)), 16, async (key) => {
      try {
        const o = await postCreate(w.port, 'test', key);
        const id = okId(o);
        if (id === null) unanswered.push(key);
        else first.set(key, id);
        if (++answered === 20) process.kill(webPid!, 'SIGKILL');
      } catch {
        unanswered.push(key);
      }
    });
    expect(answered, 'the kill happened mid-batch').toBeGreaterThanOrEqual(20);
    expect(unanswered.length, 'requests in flight at the kill failed').toBeGreaterThan(0);

    // rq-mgr starts a new web process; the client waits for it to answer, as a client would.
    await waitFor(async () => {
      const pid = (await supervisedPids(w.root))['[web]'];
      return pid !== null && pid !== webPid && (await fetch(`${w.base}/healthz`)).status === 200;
    }, 'rq-mgr to restart the web', 20_000, 50);

    // A retry of every request without an answer, then of every key: the same id each time.
    const ids = new Map(first);
    for (const key of unanswered) {
      const o = await postCreate(w.port, 'test', key);
      const id = okId(o);
      expect(id, `retry of ${key}: ${o.status} ${o.body}`).not.toBeNull();
      ids.set(key, id!);
    }
    expect(ids.size).toBe(N);
    await pool(keys, 16, async (key) => {
      const o = await postCreate(w.port, 'test', key);
      expect(okId(o), `second resend of ${key}`).toBe(ids.get(key));
    });
    expect(new Set(ids.values()).size).toBe(N);
    expect(await messageIds(w.root, 'test')).toEqual([...ids.values()].map(shortId).sort());
  }, 90_000);
});

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
        expect(r, `${command} with key ${JSON.stringify(bad)}`).toEqual(['fail', expect.stringMatching(/^idempotency_key: expected a key of 1 to 255 printable characters/)]);
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
    await waitFor(async () => {
      const now = (await supervisedPids(w.root)).test;
      return now !== null && now !== pid && (await q(w.root, 'test', 'num_messages', {})).que === 50;
    }, 'rq-mgr to restart the queue', 20_000, 50);

    const again = await Promise.all(keys.map((k) => q(w.root, 'test', 'create_message', { dest: 'test', idempotency_key: k })));
    expect(again).toEqual(ids.map((id) => ['ok', id]));
    expect(await messageIds(w.root, 'test')).toEqual(made);
  }, 60_000);

  it('a key resent while its prep message is being committed answers that message (after a restart, commit reads it from disk)', async () => {
    const { t, procs } = await queueRoot(['test']);
    const [, id] = await procs.test.cmd('prep_message', { dest: 'test', idempotency_key: 'k' });
    await procs.test.stop();
    procs.test = await QueueProc.start(t.root, 'test');
    const [commit, again] = await Promise.all([procs.test.cmd('commit_message', { msg_id: id.split('/').pop() }), procs.test.cmd('create_message', { dest: 'test', idempotency_key: 'k' })]);
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
