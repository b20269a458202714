// A fleet on a three-member etcd that loses one: the leader, made the member serving the most of the hosts' streams, SIGKILLed while fleet-limited
// runs hold and wait for slots. Nothing is noticed: every host stays a member on the same lease, sees the others up, says nothing of etcd, and works on.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdCluster } from '../helpers/etcd.js';
import { killLeftoverGroups } from '../helpers/process-groups.js';
import { waitFor } from '../helpers/rq-root.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import type { FleetView } from '../../src/ipc/fleet-reply.js';
import type { Limits } from '../mgr/limits-harness.js';
import { type Host, KEYS, logLines, recordWhere, stopHost } from './fleet-harness.js';
import { KEY, startLimitedHost } from './fleet-limits-harness.js';

const groups = killLeftoverGroups();
let cluster: EtcdCluster;
let store: EtcdStore;
const hosts: { h: Host; L: Limits }[] = [];
const NAMES = ['a', 'b', 'c'];
/**
 * These hosts' lease TTL: the default 10 s, halved like this etcd's timeouts (heartbeat 50 ms, election 500 ms: half etcd's
 * defaults). A leader's loss leaves a keep-alive unanswered for an election and a reconnection, about 1.4 s on an idle
 * machine; rq says a keep-alive failing once it is half a TTL late, which at the other tests' 2 s TTL is a few hundred ms
 * more, too few on a loaded machine. A fleet sizes its TTL to its etcd's election timeout the same way.
 */
const TTL_S = 5;

/** Each host's key in etcd and the lease it is bound to. */
async function leases(): Promise<Record<string, string>> {
  return Object.fromEntries((await store.getPrefix(KEYS.hosts)).map((kv) => [kv.key.slice(KEYS.hosts.length), kv.lease]));
}

/** The waiter keys of `deploy` with the revision each was put at: a key put again would have a later one. */
async function waiterKeys(): Promise<string[]> {
  return (await store.getPrefix(KEYS.waiters(KEY))).map((kv) => `${kv.key.slice(KEYS.waiters(KEY).length)}@${kv.modRevision}`);
}

/** What a host says of the fleet that is not "all is well": its membership, etcd's reachability, a host not up, its fleet slots stalled. */
async function complaints(x: { h: Host; L: Limits }): Promise<string[]> {
  const v = (await x.h.mgr.cmd('fleet'))[1] as FleetView;
  const out: string[] = [];
  if (v.member.state !== 'member') out.push(`member ${v.member.state} (${v.member.reason})`);
  if (!v.etcd.reachable) out.push('etcd not reachable');
  for (const o of NAMES) if (v.hosts.find((y) => y.host === o)?.state !== 'up') out.push(`${o} not up`);
  const stalled = (await x.L.status(KEY))?.stalled;
  if (stalled) out.push(`fleet slots stalled: ${stalled}`);
  return out;
}

/** Asks every host, over and over until stopped, what it says of the fleet; keeps each complaint with when it was heard. */
function watchHosts(): { stop: () => Promise<{ samples: number; heard: string[] }> } {
  const heard: string[] = [];
  let samples = 0;
  let on = true;
  const t0 = Date.now();
  const loop = (async () => {
    while (on) {
      const all = await Promise.all(hosts.map(async (x) => (await complaints(x)).map((c) => `${x.h.name} at +${Date.now() - t0} ms: ${c}`)));
      heard.push(...all.flat());
      samples++;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  // A host that does not answer fails the test when it stops watching, not as an unhandled rejection meanwhile.
  const ended = loop.then(
    () => null,
    (err: unknown) => err,
  );
  return {
    stop: async () => {
      on = false;
      const err = await ended;
      if (err) throw err;
      return { samples, heard };
    },
  };
}

describe('a fleet on a three-member etcd', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    cluster = await EtcdCluster.start(3);
    store = await EtcdStore.open({ endpoints: cluster.urls });
    // One after the other: three rq-mgrs settling at once on two cores may each take past the settle probe's wait.
    for (const n of NAMES) hosts.push(await startLimitedHost(n, { urls: cluster.urls, leaseTtlS: TTL_S }, groups));
  }, 90_000);

  afterAll(async () => {
    for (const x of hosts) await stopHost(x.h);
    store?.close();
    await cluster?.cleanup();
  }, 60_000);

  it("loses its leader, the member serving the most of the hosts' streams (SIGKILL): nothing noticed", async () => {
    const [a, b, c] = hosts;
    for (const x of hosts) {
      await recordWhere(store, x.h.name, (r) => r.queues.d?.status === 'UP', 'd UP');
      await waitFor(async () => (await complaints(x)).length === 0, `${x.h.name} to see the fleet whole`);
    }
    // a and b hold the two slots of deploy until told; c waits in line, its key in etcd.
    const release = path.join(a.h.root.root, 'release');
    const held = [await a.L.send('d', { param1: 'until_file', param2: release }), await b.L.send('d', { param1: 'until_file', param2: release })];
    for (const x of [a, b]) await x.L.statusWhen(KEY, (s) => s?.holders.length === 1, `${x.h.name} to hold a slot`);
    const waiting = await c.L.send('d', { param1: 'done' });
    await c.L.statusWhen(KEY, (s) => s?.waiting.length === 1, 'c to wait');
    // Every host's lease keep-alive and its two watches (the fleet's hosts, the limits' lines: a stream each) are open: 9 streams over
    // the 3 members, 3 or more on one of them.
    const streams = await waitFor(async () => {
      const n = await Promise.all([0, 1, 2].map((i) => cluster.streams(i)));
      return n.reduce((x, y) => x + y) === 3 * hosts.length ? n : null;
    }, "the hosts' 9 streams to be open");
    const victim = streams.indexOf(Math.max(...streams));
    expect(streams[victim]).toBeGreaterThanOrEqual(3);
    const before = await leases();
    expect(Object.keys(before).sort()).toEqual(NAMES);
    const line = await waiterKeys();
    expect(line).toHaveLength(3);

    const watch = watchHosts();
    await cluster.moveLeader(victim);
    const killedAt = Date.now();
    await cluster.kill(victim);
    expect(await cluster.leader()).not.toBe(victim);
    // Each host's record still reaches etcd when a queue changes.
    for (const x of hosts) expect(await x.h.mgr.cmd('pause_queue', 'q1')).toEqual(['ok', 'q1']);
    for (const x of hosts) await recordWhere(store, x.h.name, (r) => r.queues.q1.status === 'PAUSE', 'q1 paused, after the loss');
    for (const x of hosts) expect(await x.h.mgr.cmd('resume_queue', 'q1')).toEqual(['ok', 'q1']);
    // The line is as it was, no key put again; once the holders end, the waiter runs, and so do runs sent after the loss.
    expect(await waiterKeys()).toEqual(line);
    const after = await Promise.all(hosts.map((x) => x.L.send('d', { param1: 'done' })));
    fs.writeFileSync(release, '');
    for (const [i, id] of held.entries()) expect(await hosts[i].L.finish('d', id)).toMatchObject({ state: 'done' });
    expect(await c.L.finish('d', waiting)).toMatchObject({ state: 'done' });
    for (const [i, id] of after.entries()) expect(await hosts[i].L.finish('d', id)).toMatchObject({ state: 'done' });
    await waitFor(async () => (await waiterKeys()).length === 0, 'every waiter key of deploy to be deleted');
    // A TTL and more since the loss: had the keep-alives stopped, each host's lease and key would be gone by now
    // (a new leader gives every lease its TTL and an election timeout from when it takes over).
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + (TTL_S + 2) * 1000 - Date.now())));
    const { samples, heard } = await watch.stop();

    expect(heard).toEqual([]);
    expect(samples).toBeGreaterThan(10);
    expect(await leases()).toEqual(before);
    for (const x of hosts)
      for (const said of ['etcd does not answer', 'lease lost', 'joined again', 'dropped out', 'etcd answers again'])
        expect(logLines(x.h, said), `${x.h.name}: ${said}`).toEqual([]);
  });
});
