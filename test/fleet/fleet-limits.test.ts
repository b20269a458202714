// Fleet-wide concurrency limits against a real etcd and three real rq-mgr roots: never more than 2 fleet-wide and 2 reached (sampled from /proc over 60 runs),
// FIFO across hosts, a SIGKILLed holder's slot free within TTL + 2 s and its message back on its own disk, etcd stopped (nothing fleet-limited starts, local work drains) and back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { LimitSampler } from '../helpers/limit-sampler.js';
import { killLeftoverGroups } from '../helpers/process-groups.js';
import { waitFor } from '../helpers/rq-root.js';
import { runRq } from '../helpers/rq-cli.js';
import { startBrowser } from '../browser/browser-session.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { type Limits, expectNoOverlap, killGroup } from '../mgr/limits-harness.js';
import { type Host, TTL_S, logLines, stopHost } from './fleet-harness.js';
import { KEY, SLOTS, etcdLine, restartHost, startLimitedHost } from './fleet-limits-harness.js';

const groups = killLeftoverGroups();
let etcd: EtcdProc;
let store: EtcdStore;
const hosts: { h: Host; L: Limits }[] = [];
const roots = () => hosts.map((x) => x.h.root.root);

/** Sends one message to queue d of each host in turn; [host index, msg id] in sending order. */
async function sendRound(n: number, fields: (i: number) => Record<string, unknown>): Promise<[number, string][]> {
  const sent: [number, string][] = [];
  for (let i = 0; i < n; i++) sent.push([i % 3, await hosts[i % 3].L.send('d', fields(i))]);
  return sent;
}

/** The dashboard's #limits row of KEY as the web renders it: IN USE's cell (with its class) and SCOPE's text. */
async function dashboardRow(h: Host): Promise<{ inUse: string; scope: string }> {
  const page = await (await fetch(`http://127.0.0.1:${h.root.port}/`)).text();
  const row = new RegExp(`<tr data-key="${KEY}">.*?</tr>`, 's').exec(page)?.[0] ?? '';
  const inUse = /<td class="(in-use[^"]*)">([^<]*)<\/td>/.exec(row);
  return { inUse: inUse ? `${inUse[1]}: ${inUse[2]}` : '', scope: /<td class="scope[^"]*">([^<]*)<\/td>/.exec(row)?.[1] ?? '' };
}

async function allDone(sent: [number, string][], timeoutMs = 30_000): Promise<void> {
  for (const [i, id] of sent) expect(await hosts[i].L.finish('d', id, timeoutMs)).toMatchObject({ state: 'done' });
}

describe('fleet-wide concurrency limits through etcd', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    store = await EtcdStore.open({ endpoints: [etcd.url] });
    // One after the other: three rq-mgrs settling at once on two cores may each take past the settle probe's wait.
    for (const n of ['a', 'b', 'c']) hosts.push(await startLimitedHost(n, etcd.url, groups));
  }, 90_000);

  afterAll(async () => {
    for (const x of hosts) await stopHost(x.h);
    store?.close();
    await etcd?.cleanup();
  }, 60_000);

  it('a limit of 2 shared by three hosts: never more than 2 scripts fleet-wide, and 2 at a time (66 runs sampled from /proc)', async () => {
    const sampler = new LimitSampler(roots(), KEY, SLOTS).start();
    try {
      const sent = await sendRound(66, (i) => ({ param1: 'slow', param2: (0.1 + (i % 5) / 50).toFixed(2) }));
      await allDone(sent);
    } finally {
      await sampler.stop();
    }
    expectNoOverlap(sampler.soFar, SLOTS);
    expect(sampler.soFar.max).toBe(SLOTS);
    await waitFor(async () => (await etcdLine(store)).length === 0, 'every waiter key of deploy to be deleted');
    for (const x of hosts) await x.L.statusWhen(KEY, (s) => s === undefined, 'no slot left at rq-mgr');
  });

  it('waiters on three hosts are served in the order they joined etcd', async () => {
    const [a, b] = hosts;
    // Both slots held while the waiters join, so none can drain before the next is in etcd; then one
    // holder ends and the other slot serves the waiters one at a time.
    await a.L.send('d', { param1: 'forever', param2: a.L.pidFile('fifo-holder') });
    await b.L.send('d', { param1: 'forever', param2: b.L.pidFile('fifo-gate') });
    const [holder, gate] = [await a.L.scriptPid('fifo-holder'), await b.L.scriptPid('fifo-gate')];
    const order: [number, string][] = [];
    for (let i = 0; i < 7; i++) {
      const at = [1, 2, 0][i % 3];
      order.push([at, await hosts[at].L.send('d', { param1: 'slow', param2: '0.1' })]);
      // The next is sent once this one has its key in etcd: their create revisions are in this order.
      await waitFor(async () => (await etcdLine(store)).length === i + 3, `waiter ${i} in etcd`);
    }
    // c holds none of the slots and waits: it says both are held on other hosts; a, holding one, that one is.
    const c = hosts[2];
    expect((await c.L.statusWhen(KEY, (s) => s?.held_elsewhere === 2, 'c to see both slots held elsewhere'))?.holders).toEqual([]);
    expect((await a.L.statusWhen(KEY, (s) => s?.held_elsewhere === 1, 'a to see one slot held elsewhere'))?.holders).toHaveLength(1);
    expect((await runRq(['limits', '--key', KEY], { root: c.h.root.root })).out).toEqual(['ok 1', 'deploy 0/2 waiting 2 fleet (2 held on other hosts)']);
    // The dashboard says so too, as the page comes and as its script draws the table again from /limits.json: the key is full.
    expect(await dashboardRow(c.h)).toEqual({ inUse: 'in-use num busy: 0/2', scope: 'fleet (2 held on other hosts)' });
    const browser = await startBrowser();
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${c.h.root.port}/`);
      await page.locator('body[data-live="open"][data-settled="true"]').waitFor({ timeout: 15_000 });
      const row = page.locator(`#limits-table tr[data-key="${KEY}"]`);
      expect(await row.locator('td.scope').textContent({ timeout: 5_000 })).toBe('fleet (2 held on other hosts)');
      expect(await row.locator('td.in-use').getAttribute('class')).toBe('in-use num busy');
      expect(await page.locator('#limits-table th').allTextContents()).toEqual(['KEY', 'IN USE', 'WAITING', 'ORPHANED', 'SOURCE', 'SCOPE']);
      expect(browser.problems).toEqual([]);
    } finally {
      await browser.close();
    }
    killGroup(gate);
    await allDone(order);
    const starts = await Promise.all(order.map(async ([i, id]) => (await hosts[i].L.starts('d', id))[0]));
    expect(starts).toEqual([...starts].sort((x, y) => x - y));
    killGroup(holder);
  });

  it("a SIGKILLed host's slot is free within TTL + 2 s; its message comes back on its own disk and never ran twice at once", async () => {
    const [a, b, c] = hosts;
    const sampler = new LimitSampler(roots(), KEY, SLOTS).start();
    try {
      await a.L.send('d', { param1: 'forever', param2: a.L.pidFile('kill-a') });
      await a.L.scriptPid('kill-a');
      const victim = await c.L.send('d', { param1: 'slow', param2: '20' });
      await c.L.statusWhen(KEY, (s) => s?.holders.length === 1, 'c to hold a slot');
      const waiter = await b.L.send('d', { param1: 'slow', param2: '0.2' });
      await b.L.statusWhen(KEY, (s) => s?.waiting.length === 1, 'b to wait');
      const killedAt = Date.now();
      process.kill(c.h.mgr.child.pid!, 'SIGKILL');
      await b.L.statusWhen(KEY, (s) => s?.holders.length === 1, "b to get c's slot", (TTL_S + 2) * 1000);
      expect(Date.now() - killedAt).toBeLessThanOrEqual((TTL_S + 2) * 1000);
      expect(await b.L.finish('d', waiter)).toMatchObject({ state: 'done' });
      await restartHost(c.h, c.L);
      const back = await c.L.getMessage('d', victim);
      expect(['que', 'run']).toContain(back.state);
      expect((await c.L.history('d', victim)).some((e) => JSON.stringify(e).includes('interrupted'))).toBe(true);
      await c.L.mgr.q('d', 'delete_message', { msg_id: victim });
    } finally {
      await sampler.stop();
    }
    expectNoOverlap(sampler.soFar, SLOTS);
    for (const s of sampler.soFar.scripts)
      expect(sampler.soFar.scripts.filter((o) => o.msgId === s.msgId && o.first < s.last && s.first < o.last)).toHaveLength(1);
  });

  it('etcd stopped: no fleet-limited run starts anywhere, the hosts say why, local queues drain; etcd back: they run without a restart', async () => {
    const [a, b] = hosts;
    for (const x of hosts) await x.L.statusWhen(KEY, (s) => (s?.holders.length ?? 0) <= 1, 'earlier runs to end');
    await etcd.stop();
    // Two waiters of one key in one queue: /healthz names the key once.
    const sent = [
      [0, await a.L.send('d', { param1: 'done' })],
      [0, await a.L.send('d', { param1: 'done' })],
      [1, await b.L.send('d', { param1: 'done' })],
    ] as [number, string][];
    for (const [i] of sent)
      await hosts[i].L.statusWhen(KEY, (s) => typeof s?.stalled === 'string' && s.waiting.length >= 1, 'the wait to say etcd is gone', 10_000);
    const local = await Promise.all([a.L.send('q1', { param1: 'done' }), b.L.send('q1', { param1: 'done', limit: 'loc' })]);
    expect(await a.L.finish('q1', local[0])).toMatchObject({ state: 'done' });
    expect(await b.L.finish('q1', local[1])).toMatchObject({ state: 'done' });
    const health = (await (await fetch(`http://127.0.0.1:${a.h.root.port}/healthz`)).json()) as { queues: Record<string, { fleet_limits?: string }> };
    // etcd's reason said once, not wrapped in a second "does not answer".
    expect(health.queues.d.fleet_limits).toMatch(/^waits for fleet slots of deploy: etcd (does not|did not) answer \([^;]*$/);
    expect(health.queues.d.fleet_limits).not.toMatch(/answer \(etcd/);
    // rq limits says the key is the fleet's and why its waiters do not move.
    const limits = await runRq(['limits', '--key', KEY], { root: a.h.root.root });
    expect(limits.out).toEqual(['ok 1', expect.stringMatching(/^deploy 0\/2 waiting 2 fleet stalled: etcd (does not|did not) answer \(/)]);
    expect((await dashboardRow(a.h)).scope).toMatch(/^fleet stalled: etcd (does not|did not) answer \(/);
    const metrics = await (await fetch(`http://127.0.0.1:${a.h.root.port}/metrics`)).text();
    expect(metrics).toContain('rq_fleet_limit_waiting{key="deploy"} 2');
    expect(metrics).toContain('rq_fleet_limit_stalled{key="deploy"} 1');
    for (const [i, id] of sent) expect((await hosts[i].L.getMessage('d', id)).state).toBe('que');
    // Down past the leases, then one more waiter: its pass has no lease to ask etcd under, which is no sign etcd answers,
    // so the stall keeps etcd's reason and nothing says it is back.
    for (const x of [a, b]) await waitFor(() => logLines(x.h, 'fleet: lease lost').length >= 1, 'the lease to be lost', 30_000);
    sent.push([0, await a.L.send('d', { param1: 'done' })]);
    const after = await a.L.statusWhen(KEY, (s) => s?.waiting.length === 3, 'the new waiter in the line');
    expect(after?.stalled).toMatch(/^etcd (does not|did not) answer \((?!etcd)/);
    expect(logLines(a.h, 'fleet limits: etcd answers again')).toEqual([]);
    for (const [i, id] of sent) expect((await hosts[i].L.getMessage('d', id)).state).toBe('que');
    await etcd.run();
    await allDone(sent, 20_000);
    for (const x of [a, b]) expect(logLines(x.h, 'fleet limits: etcd does not answer')).toHaveLength(1);
    for (const x of [a, b]) expect(logLines(x.h, 'fleet limits: etcd answers again')).toHaveLength(1);
  });
});
