// Pools over a real etcd and real rq-mgrs on loopback: fleet:<queue> messages spread over three pool hosts from a fourth, exactly once, attachments
// intact, with a pool host stopped half-way; hosts whose queue is DOWN or PAUSEd skipped; messages waiting while no host takes them.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { BIN, run } from '../helpers/mgr-proc.js';
import { EtcdProc } from '../helpers/etcd.js';
import type { Host } from './hosts.js';
import { POOL, fleetHost, poolMessages, poolSeen, relayCount, sendWithAttachment } from './pool-hosts.js';

// Soft-fail back-off count²·10 s scaled down (docs/relay.md), inherited by every rq-mgr.
process.env.RQ_RELAY_BACKOFF_SCALE = '0.02';
/** 300 in the full proof (RQ_POOL_MESSAGES=300); fewer by default, so the file stays within about a minute on two shared cores. */
const N = Number(process.env.RQ_POOL_MESSAGES ?? 90);

let etcd: EtcdProc;
let sender: Host;
const pool: Record<string, Host> = {};
let dir: string;

beforeAll(async () => {
  etcd = await EtcdProc.start();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-pool-'));
  const [s, a, b, c] = await Promise.all([fleetHost('s', etcd.url, false), ...['a', 'b', 'c'].map((n) => fleetHost(n, etcd.url, true))]);
  sender = s;
  Object.assign(pool, { a, b, c });
  await poolSeen(sender, { a: 'UP', b: 'UP', c: 'UP' }, 'three pool hosts UP');
}, 120_000);

afterAll(async () => {
  await Promise.all([sender?.stop(), ...Object.values(pool).map((h) => h.stop())]);
  await etcd?.cleanup();
  await fs.rm(dir, { recursive: true, force: true });
}, 60_000);

/** Every pool message finished on every pool host, by token. */
async function doneEverywhere(): Promise<Record<string, { token: string; md5s: string[] }[]>> {
  const out: Record<string, { token: string; md5s: string[] }[]> = {};
  for (const [name, h] of Object.entries(pool)) out[name] = await poolMessages(h, 'done');
  return out;
}

describe('pools: fleet:<queue> through the two-phase relay', { timeout: 120_000 }, () => {
  it(`${N} messages with attachments, one pool host stopped half-way: each done exactly once, intact, spread fairly`, async () => {
    const sent = new Map<string, string>();
    const send = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const token = `m${i}`;
        sent.set(token, (await sendWithAttachment(sender, dir, token)).md5);
      }
    };
    await send(0, N / 2);
    await waitFor(async () => (await relayCount(sender, 'relayed')) >= N / 2 - 4, 'half of them relayed', 60_000, 100);
    await pool.c.down();
    const send2 = send(N / 2, N);
    await poolSeen(sender, { a: 'UP', b: 'UP', c: null }, 'c gone');
    await send2;
    // Only a message whose commit went to c unanswered may wait for c; every other one goes to a or b.
    await waitFor(async () => (await relayCount(sender, 'relayed')) >= N - 4 && (await relayCount(sender, 'run')) === 0, 'the rest relayed', 60_000, 100);
    await pool.c.up();
    await waitFor(async () => (await relayCount(sender, 'relayed')) === N, `all ${N} relayed`, 30_000, 100);
    const done = await waitFor(
      async () => {
        const d = await doneEverywhere();
        return Object.values(d).flat().length >= N ? d : null;
      },
      `all ${N} done on the pool`,
      30_000,
      100,
    );

    const all = Object.values(done).flat();
    expect(all.map((m) => m.token).sort()).toEqual([...sent.keys()].sort());
    for (const m of all) expect(m.md5s).toEqual([sent.get(m.token)]);
    expect(await relayCount(sender, 'err')).toBe(0);
    // Expected shares: a and b a sixth each of the first half and a quarter of the whole from the second; c a sixth before it stopped.
    for (const name of ['a', 'b']) expect(done[name].length).toBeGreaterThanOrEqual(N / 4);
    expect(done.c.length).toBeGreaterThanOrEqual(N / 20);
    expect(done.c.length).toBeLessThanOrEqual(N / 2);
  });

  it('skips a host whose queue is PAUSEd and one whose queue is DOWN', async () => {
    expect(await pool.a.mgr!.cmd('pause_queue', POOL)).toEqual(['ok', POOL]);
    expect(await pool.b.mgr!.cmd('down_queue', POOL)).toEqual(['ok', POOL]);
    await poolSeen(sender, { a: 'PAUSE', b: 'DOWN', c: 'UP' }, 'a paused, b down');
    // The CLI needs no --relay-ok for a pool: the fleet is the operator's.
    for (let i = 0; i < 3; i++) {
      const r = await run(BIN('rq'), ['sendmesg', '--root', sender.root, '--dest', `fleet:${POOL}`, '--param1', `skip${i}`]);
      expect(r.stdout).toMatch(/^ok /);
      // c takes it: no note.
      expect(r.stderr).toBe('');
    }
    // And a batch over HTTP, each message naming the pool.
    const batch = await fetch(`${sender.base}/q/relay/new_messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body: [3, 4, 5].map((i) => JSON.stringify({ dest: `fleet:${POOL}`, param1: `skip${i}` })).join('\n'),
    });
    expect(batch.status).toBe(200);
    await waitFor(async () => (await poolMessages(pool.c, 'done')).filter((m) => m.token.startsWith('skip')).length === 6, 'the six done on c', 30_000, 100);
    // b's queue, DOWN, answers nothing: its que is read on disk.
    expect(await pool.a.q(POOL, 'messages', { state: 'que' })).toEqual([]);
    expect(await fs.readdir(path.join(pool.b.root, 'queues', POOL, 'que'))).toEqual([]);
    expect(await pool.a.mgr!.cmd('resume_queue', POOL)).toEqual(['ok', POOL]);
    expect(await pool.b.mgr!.cmd('up_queue', POOL)).toEqual(['ok', POOL]);
  });

  it('waits on the sender while no host takes the queue, without a busy loop, and goes as soon as one does', async () => {
    for (const h of Object.values(pool)) expect(await h.mgr!.cmd('pause_queue', POOL)).toEqual(['ok', POOL]);
    await poolSeen(sender, { a: 'PAUSE', b: 'PAUSE', c: 'PAUSE' }, 'every pool queue paused');
    // The CLI makes the message and says why it will wait (prepped: these two are never sent).
    const noted = async (queue: string) => {
      const r = await run(BIN('rq'), ['prepmesg', '--root', sender.root, '--dest', `fleet:${queue}`]);
      expect(r.stdout).toMatch(/^ok /);
      return r.stderr.trim();
    };
    expect(await noted(POOL)).toBe(
      `rq: no host of fleet test has queue ${POOL} UP now (a PAUSE, b PAUSE, c PAUSE): the message, once committed, waits in the relay queue until one is`,
    );
    expect(await noted('wrok')).toBe(
      "rq: no host of fleet test has queue wrok now: the message, once committed, waits in the relay queue until one does (rq queues --fleet lists the fleet's queues)",
    );
    const res = await fetch(`${sender.base}/q/relay/new_message`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ x_format: 'json', mesg: JSON.stringify({ dest: `fleet:${POOL}`, param1: 'waiting' }) }),
    });
    const [ok, fullId] = (await res.json()) as [string, string];
    expect(ok).toBe('ok');
    const id = fullId.split('/').pop()!;
    // Attempts back off (count²·10 s, scaled): a few in three seconds, each ending in a resend naming why.
    const msg = await waitFor(
      async () => {
        const m = (await sender.q('relay', 'get_message', { msg_id: id }))[1];
        // Read between attempts: during one the status is the run's own.
        return Number(m.count) >= 3 && m.state === 'que' ? m : null;
      },
      'three attempts',
      20_000,
      100,
    );
    expect(msg.status).toContain(`no host of fleet test has queue ${POOL} UP`);
    // Its next attempt an hour away, as a long back-off leaves it: only the word that a host is back can send it now.
    // On a loaded host the next attempt can begin between that read and the reschedule, which a running message refuses: asked again once it is back in que.
    await waitFor(
      async () => (await sender.q('relay', 'reschedule_message', { msg_id: id, delay: 3600 }))[0] === 'ok',
      'the reschedule between two attempts',
      20_000,
      100,
    );
    const tried = Number((await sender.q('relay', 'get_message', { msg_id: id }))[1].count);
    expect(await pool.b.mgr!.cmd('resume_queue', POOL)).toEqual(['ok', POOL]);
    await sender.waitState('relay', id, ['relayed'], 30_000);
    const history = (await sender.q('relay', 'get_history', { msg_id: id }))[1] as { event?: string; actor?: string }[];
    expect(history.filter((e) => e.event === 'reschedule').map((e) => e.actor)).toEqual(['socket', 'fleet']);
    // The woken attempt relayed it: no other attempt ended in a resend.
    expect(Number((await sender.q('relay', 'get_message', { msg_id: id }))[1].count)).toBe(tried);
    await waitFor(async () => (await poolMessages(pool.b, 'done')).some((m) => m.token === 'waiting'), 'done on b', 20_000, 100);
    for (const name of ['a', 'c']) expect(await pool[name].mgr!.cmd('resume_queue', POOL)).toEqual(['ok', POOL]);
  });
});
