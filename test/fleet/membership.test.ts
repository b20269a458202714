// Fleet membership against a real etcd: three hosts join with their queues and counts, a duplicate name is refused, a SIGKILLed host
// drops out within its lease TTL, a gone host is forgotten on asking (`rq fleet --forget`), a clean stop leaves at once, etcd's outage leaves the hosts running and rejoining, and a host stopped
// while etcd hangs still stops.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { waitFor } from '../helpers/rq-root.js';
import { BIN, run } from '../helpers/mgr-proc.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import type { FleetView } from '../../src/ipc/fleet-reply.js';
import { type Host, KEYS, TTL_S, hostRecords, logLines, recordWhere, startHost, stopHost } from './fleet-harness.js';

let etcd: EtcdProc;
let store: EtcdStore;
const hosts: Record<string, Host> = {};

async function fleetOf(h: Host): Promise<FleetView> {
  const r = await h.mgr.cmd('fleet');
  expect(r[0]).toBe('ok');
  return r[1] as FleetView;
}

async function fleetJson(h: Host): Promise<FleetView> {
  const res = await fetch(`http://127.0.0.1:${h.root.port}/fleet.json`);
  expect(res.status).toBe(200);
  return (await res.json()) as FleetView;
}

describe('fleet membership through etcd', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    store = await EtcdStore.open({ endpoints: [etcd.url] });
    const started = await Promise.all(['a', 'b', 'c'].map((n) => startHost(n, etcd.url)));
    for (const h of started) hosts[h.name] = h;
  }, 90_000);

  afterAll(async () => {
    for (const h of Object.values(hosts)) await stopHost(h);
    store?.close();
    await etcd?.cleanup();
  }, 60_000);

  it('each host puts its key with its URL and its queues, bound to a lease', async () => {
    for (const name of ['a', 'b', 'c']) {
      const r = await recordWhere(store, name, (x) => x.queues.q1?.status === 'UP', 'q1 UP');
      expect(r.url).toBe(`http://127.0.0.1:${hosts[name].root.port}/`.replace(/\/$/, ''));
      expect(r.queues.q1).toEqual({ status: 'UP', ready: 0, running: 0, workers: 2 });
    }
    // The web starts beside the queues: its port may not listen yet.
    const view = await waitFor(() => fleetJson(hosts.a), 'the web of a');
    expect(view).toMatchObject({ fleet: 'test', host: 'a', member: { state: 'member' }, etcd: { reachable: true } });
    expect(view.hosts.map((h) => [h.host, h.state])).toEqual([
      ['a', 'up'],
      ['b', 'up'],
      ['c', 'up'],
    ]);
  });

  it('puts again when a queue changes: its status, its ready and running counts', async () => {
    const a = hosts.a;
    expect(await a.mgr.cmd('pause_queue', 'q1')).toEqual(['ok', 'q1']);
    await recordWhere(store, 'a', (r) => r.queues.q1.status === 'PAUSE', 'q1 paused');
    for (let i = 0; i < 3; i++) expect((await a.mgr.q('q1', 'create_message', { dest: 'q1', param1: 'done' }))[0]).toBe('ok');
    await recordWhere(store, 'a', (r) => r.queues.q1.ready === 3, 'three ready');
    expect(await a.mgr.cmd('resume_queue', 'q1')).toEqual(['ok', 'q1']);
    await recordWhere(store, 'a', (r) => r.queues.q1.status === 'UP' && r.queues.q1.ready === 0 && r.queues.q1.running === 0, 'drained');
    await a.mgr.q('q1', 'create_message', { dest: 'q1', param1: 'slow', param2: '2' });
    await recordWhere(store, 'a', (r) => r.queues.q1.running === 1, 'one running');
    await recordWhere(store, 'a', (r) => r.queues.q1.running === 0, 'none running');
  });

  it('refuses a second host of the same name, in its log and its status, and leaves the first one its key', async () => {
    const dup = await startHost('a', etcd.url);
    try {
      const refused = await waitFor(async () => {
        const v = await fleetOf(dup);
        return v.member.state === 'refused' ? v.member : null;
      }, 'the second "a" to be refused');
      expect(refused.reason).toContain('the host name a is held by another rq');
      await waitFor(() => logLines(dup, 'RQ_ERR_FLEET_HOST_TAKEN').length === 1, 'the refusal in its log');
      const said = logLines(dup, 'RQ_ERR_FLEET_HOST_TAKEN');
      // The message says its fleet once: not "fleet: fleet test: …".
      expect(said.map((l) => JSON.parse(l).msg)).toEqual([expect.stringMatching(/^fleet test: the host name a is held by another rq /)]);
      const status = await run(BIN('rq-mgr'), ['status', '--root', dup.root.root]);
      expect(status.stdout).toContain('fleet test as a: refused');
      expect((await hostRecords(store)).a.url).toBe(`http://127.0.0.1:${hosts.a.root.port}`);
    } finally {
      await stopHost(dup);
    }
    // The refused host held no key: the first one's is still there.
    expect((await hostRecords(store)).a.url).toBe(`http://127.0.0.1:${hosts.a.root.port}`);
  });

  it("a SIGKILLed host's key is gone within its TTL + 2 s, and the others show it gone since then", async () => {
    const c = hosts.c;
    const killedAt = Date.now();
    process.kill(c.mgr.child.pid!, 'SIGKILL');
    await waitFor(async () => !(await hostRecords(store)).c, "c's key to expire", (TTL_S + 2) * 1000, 50);
    expect(Date.now() - killedAt).toBeLessThanOrEqual((TTL_S + 2) * 1000);
    const gone = await waitFor(async () => (await fleetJson(hosts.a)).hosts.find((h) => h.host === 'c' && h.state === 'gone'), 'a to show c gone');
    expect(Date.parse(gone.since!)).toBeGreaterThanOrEqual(killedAt - 1000);
    expect(gone.url).toBe(`http://127.0.0.1:${c.root.port}`);
    // Some host wrote when c left, so a host that starts later sees it too.
    const seen = await waitFor(async () => (await store.getPrefix(KEYS.seenHost('c'))).find((kv) => kv.value.includes('left_at')), 'seen/c left_at');
    expect(JSON.parse(seen.value)).toMatchObject({ host: 'c', left_at: expect.any(String) });
    await stopHost(c);
    delete hosts.c;
  });

  it('while etcd is down the hosts run their queues on (one warn each), and they rejoin when it is back', async () => {
    await etcd.stop();
    for (const h of [hosts.a, hosts.b]) await waitFor(async () => (await fleetOf(h)).member.state === 'unreachable', `${h.name} to see etcd gone`);
    const since = await Promise.all([hosts.a, hosts.b].map(async (h) => (await fleetOf(h)).member.since));
    const ids = await Promise.all(
      [hosts.a, hosts.b].map(async (h) =>
        String((await h.mgr.q('q1', 'create_message', { dest: 'q1', param1: 'done' }))[1])
          .split('/')
          .pop(),
      ),
    );
    await Promise.all(
      [hosts.a, hosts.b].map((h, i) =>
        waitFor(async () => (await h.mgr.q('q1', 'get_message_state', { msg_id: ids[i] }))[1] === 'done', `${h.name}'s message done`),
      ),
    );
    // Down longer than the leases last: each host gives its lease up, and on etcd's return grants a new one and takes its key over.
    // The loss is seen after the keep-alives have failed past the TTL, later on a machine loaded by the whole suite.
    for (const h of [hosts.a, hosts.b]) await waitFor(() => logLines(h, 'fleet: lease lost').length >= 1, `${h.name} to give its lease up`, 30_000);
    // The reason changed along the way (the lease lost, etcd's client waiting before it tries again): the since is still the outage's start.
    for (const [i, h] of [hosts.a, hosts.b].entries()) expect((await fleetOf(h)).member).toMatchObject({ state: 'unreachable', since: since[i] });
    await etcd.run();
    for (const h of [hosts.a, hosts.b]) await waitFor(async () => (await fleetOf(h)).member.state === 'member', `${h.name} to rejoin`, 20_000);
    // The restarted etcd restored the old leases, which expire a TTL later; the keys, now on the new ones, stay.
    for (const until = Date.now() + (TTL_S + 1) * 1000; Date.now() < until;) expect(Object.keys(await hostRecords(store)).sort()).toEqual(['a', 'b']);
    for (const h of [hosts.a, hosts.b]) {
      expect(logLines(h, 'etcd does not answer')).toHaveLength(1);
      expect(logLines(h, 'fleet: joined again')).toHaveLength(1);
    }
  });

  it('`rq fleet` prints the hosts, up and gone, with their URLs and queues; --json the view', async () => {
    const out = (await run(BIN('rq'), ['fleet', '--root', hosts.a.root.root])).stdout.split('\n');
    expect(out[0]).toBe('fleet test: this host is a (member)');
    expect(out[1]).toMatch(/^HOST +STATE +SINCE +URL +QUEUES$/);
    expect(out.find((l) => l.startsWith('a '))).toMatch(new RegExp(`^a +up +\\S+ +http://127\\.0\\.0\\.1:${hosts.a.root.port} +q1 UP ready 0 running 0/2$`));
    expect(out.find((l) => l.startsWith('c '))).toMatch(/^c +gone +\S+ +http:\/\/127\.0\.0\.1:\d+ +-$/);
    const json = JSON.parse((await run(BIN('rq'), ['fleet', '--json', '--root', hosts.a.root.root])).stdout) as FleetView;
    expect(json.hosts.map((h) => h.host)).toEqual(['a', 'b', 'c']);
  });

  it("a command given another fleet host's full id says whose it is, not that no message has it; this host's own is found", async () => {
    const far = String((await hosts.b.mgr.q('q1', 'create_message', { dest: 'q1', param1: 'done' }))[1]);
    const b = `http://127.0.0.1:${hosts.b.root.port}/`;
    expect(far.startsWith(`${b}q/q1/`)).toBe(true);
    await expect(run(BIN('rq'), ['statusmesg', '--root', hosts.a.root.root, far])).rejects.toMatchObject({
      code: 2,
      stderr: `rq: --msg_id: expected a message of this root, received ${JSON.stringify(far)}, a message of host b of fleet test: ask it there (its root's rq, or its web at ${b.slice(0, -1)})\n`,
    });
    const own = String((await hosts.a.mgr.q('q1', 'create_message', { dest: 'q1', param1: 'done' }))[1]);
    expect((await run(BIN('rq'), ['statusmesg', '--root', hosts.a.root.root, own])).stdout).toMatch(/^ok /);
  });

  it('/metrics says the membership', async () => {
    const text = await (await fetch(`http://127.0.0.1:${hosts.a.root.port}/metrics`)).text();
    expect(text).toContain('rq_fleet_member{fleet="test",host="a"} 1');
    expect(text).toContain('rq_fleet_hosts{fleet="test"} 2');
  });

  it("`rq fleet --forget` removes a gone host from every host's view; a host up, this one, a name never seen or no name are refused", async () => {
    const forget = (host: string, ...more: string[]) =>
      run(BIN('rq'), ['fleet', '--forget', host, '--root', hosts.a.root.root, ...more]).then(
        (r) => ({ code: 0, out: r.stdout.trim() }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: `${e.stdout}${e.stderr}`.trim() }),
      );
    const up = (h: string) =>
      `fail fleet test: host ${h} is up; only a gone host is forgotten (stop it with rq-mgr stop on that host, then forget it from another)`;
    expect(await forget('b')).toEqual({ code: 1, out: up('b') });
    expect(await forget('a')).toEqual({ code: 1, out: up('a') });
    expect(await forget('')).toMatchObject({ code: 2, out: expect.stringContaining('--forget: expected the name of a host gone from the fleet, received ""') });
    expect(await forget('Bad!')).toMatchObject({ code: 1, out: expect.stringMatching(/^fail host: expected a name of 1-63 letters.*, received "Bad!"$/) });
    expect(Object.keys(await hostRecords(store)).sort()).toEqual(['a', 'b']);
    expect((await store.getPrefix(KEYS.seen)).map((kv) => kv.key).sort()).toEqual(['a', 'b', 'c'].map((h) => KEYS.seenHost(h)));

    expect(await forget('c', '--json')).toEqual({ code: 0, out: '{"forgotten":"c"}' });
    expect((await store.getPrefix(KEYS.seen)).map((kv) => kv.key).sort()).toEqual(['a', 'b'].map((h) => KEYS.seenHost(h)));
    for (const h of [hosts.a, hosts.b]) await waitFor(async () => !(await fleetOf(h)).hosts.some((x) => x.host === 'c'), `${h.name} to forget c`);
    expect((await fleetOf(hosts.a)).hosts.map((h) => [h.host, h.state])).toEqual([
      ['a', 'up'],
      ['b', 'up'],
    ]);
    expect(await forget('c')).toEqual({ code: 1, out: 'fail fleet test: no host c was seen (rq fleet lists the hosts)' });
    expect(await forget('c', '--json')).toMatchObject({ code: 1, out: expect.stringContaining('"code":"RQ_ERR_FLEET_HOST_UNKNOWN"') });
  });

  it('a clean stop revokes the lease: the key goes at once and the host shows gone', async () => {
    const stoppedAt = Date.now();
    await hosts.b.mgr.stop();
    expect((await hostRecords(store)).b).toBeUndefined();
    const gone = await waitFor(async () => (await fleetOf(hosts.a)).hosts.find((h) => h.host === 'b' && h.state === 'gone'), 'a to show b gone');
    expect(Date.parse(gone.since!)).toBeGreaterThanOrEqual(stoppedAt - 1000);
    // Gone now: forgotten on asking.
    expect((await run(BIN('rq'), ['fleet', '--forget', 'b', '--root', hosts.a.root.root])).stdout).toBe('ok b\n');
  });

  it("a host stopped while etcd hangs stops within its calls' bounds, what it had of etcd left to expire", async () => {
    await etcd.freeze(true);
    try {
      const stoppedAt = Date.now();
      await hosts.a.mgr.stop();
      // The watches' cancels (6 s each, side by side), then left_at's put (6 s) if the 2 s lease is not lost by then: not as long as etcd hangs.
      expect(Date.now() - stoppedAt).toBeLessThan(20_000);
      expect(logLines(hosts.a, 'FINAL SHUTDOWN')).toHaveLength(1);
    } finally {
      await etcd.freeze(false);
    }
  });
});
