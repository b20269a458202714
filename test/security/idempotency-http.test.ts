// Idempotent creates over HTTP against real daemons: 16 clients with the same keys, and a client that
// resends after the web was killed mid-batch, each end with exactly one message per key.
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { seededRandom } from '../helpers/seeded-random.mjs';
import { messageIds, supervisedPids } from './fuzz-helpers.js';
import { runCleanups, SEED, KEYS, CLIENTS, IN_FLIGHT, shortId, webRoot, shuffled, postCreate, okId, pool, journal } from './idempotency-helpers.js';

afterEach(runCleanups);

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
    const disagreements = answers.flatMap((got, c) =>
      keys.filter((k) => got.get(k) !== first.get(k)).map((k) => `client ${c} key ${k}: ${got.get(k)} vs ${first.get(k)}`),
    );
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
    await waitFor(
      async () => {
        const pid = (await supervisedPids(w.root))['[web]'];
        return pid !== null && pid !== webPid && (await fetch(`${w.base}/healthz`)).status === 200;
      },
      'rq-mgr to restart the web',
      20_000,
      50,
    );

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
