// Dependencies across hosts of a fleet (docs/fleet.md): a report on host a waits for parts on hosts b and c by their full ids, runs once after both,
// also when a or b is SIGKILLed in between; refs of no fleet host are refused at create and over HTTP, with nothing written.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { waitFor } from '../helpers/rq-root.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { stdioOf } from '../mgr/limits-harness.js';
import { type Host, killHost, logTail, startHost, stopHost, webUp } from './fleet-harness.js';

let etcd: EtcdProc;
const hosts: Record<string, Host> = {};
let gates: string;

const url = (h: Host) => `http://127.0.0.1:${h.root.port}`;
const fullId = (h: Host, id: string) => `${url(h)}/q/q1/${id}`;

/** A part on `h` that runs until its gate file `name` exists; its id once it runs. */
async function part(h: Host, name: string): Promise<string> {
  const r = await h.mgr.q('q1', 'create_message', { dest: 'q1', param1: 'until_file', param2: path.join(gates, name) });
  expect(r[0]).toBe('ok');
  const id = String(r[1]).split('/').pop()!;
  await stateOf(h, id, ['run']);
  return id;
}

const open = (name: string) => fs.writeFileSync(path.join(gates, name), '');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function message(h: Host, id: string): Promise<any> {
  const r = await h.mgr.q('q1', 'get_message', { msg_id: id });
  expect(r[0]).toBe('ok');
  return r[1];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function stateOf(h: Host, id: string, states: string[], timeoutMs = 30_000): Promise<any> {
  return waitFor(
    async () => {
      const m = await message(h, id).catch(() => null);
      return m && states.includes(m.state) ? m : null;
    },
    `${h.name}'s ${id} in ${states.join('|')}`,
    timeoutMs,
  );
}

/** The report on a, depending on `refs`; its id. It prints its environment (RQ_DEPENDS) and ends done. */
async function report(refs: string[]): Promise<string> {
  const r = await hosts.a.mgr.q('q1', 'create_message', { dest: 'q1', param1: 'env', depends: refs });
  expect(r, `${JSON.stringify(r)}\n${logTail(hosts.a)}`).toEqual(['ok', expect.any(String)]);
  return String(r[1]).split('/').pop()!;
}

async function awaitedBy(id: string): Promise<string[]> {
  const m = await message(hosts.a, id);
  return m.waiting?.reason === 'dependencies' ? m.waiting.waiting_on : [];
}

/** Its history's run starts, and when its dependencies were each resolved. */
async function runs(id: string): Promise<{ starts: string[]; resolved: Record<string, string> }> {
  const r = await hosts.a.mgr.q('q1', 'get_history', { msg_id: id });
  expect(r[0]).toBe('ok');
  const events = r[1] as { event?: string; from?: string; to?: string; at: string; ref?: string }[];
  return {
    starts: events.filter((e) => e.from === 'que' && e.to === 'run').map((e) => e.at),
    resolved: Object.fromEntries(events.filter((e) => e.event === 'depends_resolved').map((e) => [e.ref, e.at])),
  };
}

/** Until `h` sees all three hosts up in the fleet and its web answers: a ref to another host is checked against that view. */
async function seesFleet(h: Host): Promise<void> {
  await waitFor(async () => {
    const v = await h.mgr.cmd('fleet');
    return v[0] === 'ok' && v[1].hosts.filter((x: { state: string }) => x.state === 'up').length === 3;
  }, `${h.name} to see the fleet`);
  await webUp(h);
}

async function restart(h: Host): Promise<void> {
  h.mgr = await MgrProc.start(h.root.root);
  await h.mgr.waitQueueUp('q1');
  await seesFleet(h);
}

describe('dependencies across fleet hosts', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    const started = await Promise.all(['a', 'b', 'c'].map((n) => startHost(n, etcd.url)));
    for (const h of started) hosts[h.name] = h;
    gates = fs.mkdtempSync(path.join(hosts.a.root.root, 'gates-'));
    // Each host sees the other two up, and their webs answer.
    for (const h of started) await seesFleet(h);
  }, 90_000);

  afterAll(async () => {
    for (const h of Object.values(hosts)) await stopHost(h);
    await etcd?.cleanup();
  }, 60_000);

  it('a report on a waits for parts on b and c, runs once after both, and its script reads how each ended', async () => {
    const [pb, pc] = [await part(hosts.b, 'b1'), await part(hosts.c, 'c1')];
    const id = await report([fullId(hosts.b, pb), `${fullId(hosts.c, pc)}/`]);
    // Kept in the one spelling both hosts use: the trailing slash is gone.
    expect((await message(hosts.a, id)).depends).toEqual([fullId(hosts.b, pb), fullId(hosts.c, pc)]);
    expect((await awaitedBy(id)).sort()).toEqual([fullId(hosts.b, pb), fullId(hosts.c, pc)].sort());
    // b's part keeps a as its dependent, by a's full id.
    expect((await message(hosts.b, pb)).dependents).toEqual([fullId(hosts.a, id)]);
    open('b1');
    await stateOf(hosts.b, pb, ['done']);
    await waitFor(async () => (await awaitedBy(id)).length === 1, 'the report to hear of b');
    expect(await awaitedBy(id)).toEqual([fullId(hosts.c, pc)]);
    expect((await message(hosts.a, id)).state).toBe('que');
    // The message page links each part to its page on its own host.
    const page = await (await fetch(`${url(hosts.a)}/q/q1/${id}`)).text();
    for (const ref of [fullId(hosts.b, pb), fullId(hosts.c, pc)]) expect(page).toContain(`<a class="ref" href="${ref}">`);
    open('c1');
    const done = await stateOf(hosts.a, id, ['done']);
    expect(done.depends_done).toEqual({ [fullId(hosts.b, pb)]: 'done', [fullId(hosts.c, pc)]: 'done' });
    const { starts, resolved } = await runs(id);
    expect(starts).toHaveLength(1);
    expect(Object.keys(resolved).sort()).toEqual([fullId(hosts.b, pb), fullId(hosts.c, pc)].sort());
    for (const at of Object.values(resolved)) expect(Date.parse(starts[0])).toBeGreaterThanOrEqual(Date.parse(at));
    const env = await stdioOf(hosts.a.root.root, 'q1', id);
    expect(env).toContain(`RQ_DEPENDS=${fullId(hosts.b, pb)}=done ${fullId(hosts.c, pc)}=done\n`);
  });

  it('a SIGKILLed while the parts end: at its restart it learns both ended and runs the report once', async () => {
    const [pb, pc] = [await part(hosts.b, 'b2'), await part(hosts.c, 'c2')];
    const id = await report([fullId(hosts.b, pb), fullId(hosts.c, pc)]);
    expect(await awaitedBy(id)).toHaveLength(2);
    await killHost(hosts.a);
    open('b2');
    open('c2');
    await stateOf(hosts.b, pb, ['done']);
    await stateOf(hosts.c, pc, ['done']);
    await restart(hosts.a);
    await stateOf(hosts.a, id, ['done']);
    expect((await runs(id)).starts).toHaveLength(1);
  });

  it('b SIGKILLed while its part runs: the part runs again at b, and the report runs once, after it', async () => {
    const [pb, pc] = [await part(hosts.b, 'b3'), await part(hosts.c, 'c3')];
    const id = await report([fullId(hosts.b, pb), fullId(hosts.c, pc)]);
    open('c3');
    await waitFor(async () => (await awaitedBy(id)).length === 1, 'the report to hear of c');
    await killHost(hosts.b);
    await restart(hosts.b);
    await stateOf(hosts.b, pb, ['run']);
    expect((await message(hosts.a, id)).state).toBe('que');
    open('b3');
    await stateOf(hosts.b, pb, ['done']);
    await stateOf(hosts.a, id, ['done']);
    const { starts, resolved } = await runs(id);
    expect(starts).toHaveLength(1);
    expect(Date.parse(starts[0])).toBeGreaterThanOrEqual(Date.parse(resolved[fullId(hosts.b, pb)]));
  });

  it("a part that failed on c fails the report on a (policy fail), naming the part's full id", async () => {
    const r = await hosts.c.mgr.q('q1', 'create_message', { dest: 'q1', param1: 'err' });
    const pc = String(r[1]).split('/').pop()!;
    await stateOf(hosts.c, pc, ['err']);
    const id = await report([fullId(hosts.c, pc)]);
    const failed = await stateOf(hosts.a, id, ['err']);
    expect(failed.status).toBe(`err - DEPENDENCY FAILED - ${fullId(hosts.c, pc)} is err (failed)`);
    expect((await runs(id)).starts).toHaveLength(0);
  });

  it('refuses a ref of no fleet host, or of no message, at create; and a dependent of no fleet host over HTTP; nothing is written', async () => {
    const before = (await hosts.a.mgr.q('q1', 'status'))[1];
    const stranger = 'http://127.0.0.1:1/q/q1/20261121.1643.46.613.1';
    const r1 = await hosts.a.mgr.q('q1', 'create_message', { dest: 'q1', param1: 'done', depends: [stranger] });
    expect(r1[0]).toBe('fail');
    expect(r1[1]).toContain(`depends[0]: expected the full id of a message of another host of fleet test that is up (`);
    expect(r1[1]).toContain(`received "${stranger}"`);
    const missing = fullId(hosts.b, '20261121.1643.46.613.1');
    const r2 = await hosts.a.mgr.q('q1', 'create_message', { dest: 'q1', param1: 'done', depends: [missing] });
    expect(r2).toEqual(['fail', `depends[0]: no message ${missing}`]);
    expect((await hosts.a.mgr.q('q1', 'status'))[1]).toEqual(before);

    const pb = await part(hosts.b, 'b4');
    const res = await fetch(`${fullId(hosts.b, pb)}/dependents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ dependent: `${stranger}x` }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as unknown[];
    expect(body[0]).toBe('fail');
    expect(String(body[1])).toContain('dependent: expected the full id of a message of another host of fleet test that is up');
    expect((await message(hosts.b, pb)).dependents).toBeUndefined();
    open('b4');
    await stateOf(hosts.b, pb, ['done']);
  });
});
