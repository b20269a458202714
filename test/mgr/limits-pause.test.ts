// Concurrency limits and paused queues: a pause withdraws waiters and gives back a granted slot it has no worker for; resume asks again with the same since (rq-beyond §B12).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idTime } from '../../src/message/message-id.js';
import { killLeftoverGroups } from '../helpers/process-groups.js';
import { type TestRoot } from '../helpers/rq-root.js';
import { Limits, killGroup, START_SHARED_MS, startShared } from './limits-harness.js';

/** Process groups of `forever` scripts a failing test could leave behind. */
const groups = killLeftoverGroups();

describe('one rq-mgr, several queues sharing keys', () => {
  let t: TestRoot;
  let L: Limits;

  beforeAll(async () => {
    ({ t, L } = await startShared(['pa', 'pb', 'pc'], groups));
  }, START_SHARED_MS);
  afterAll(async () => {
    await L?.mgr.stop();
    await t?.cleanup();
  });

  it('pausing a queue withdraws its waiters (others move up); on resume they ask again with the same since', async () => {
    const holder = await L.send('pb', { param1: 'forever', param2: L.pidFile('pz-holder'), limit: 'pz' });
    const holderPid = await L.scriptPid('pz-holder');
    const p = await L.send('pa', { param1: 'done', limit: 'pz' });
    await L.line('pz', [`pa/${p}`]);
    const w = await L.send('pb', { param1: 'forever', param2: L.pidFile('pz-w'), limit: 'pz' });
    await L.line('pz', [`pa/${p}`, `pb/${w}`]);

    expect(await L.mgr.cmd('pause_queue', 'pa')).toEqual(['ok', 'pa']);
    await L.line('pz', [`pb/${w}`], 'pa paused: its waiter withdrawn');
    expect((await L.mgr.q('pa', 'waiting', { reason: 'limit' }))[1]).toEqual([]);
    expect(await L.mgr.q('pa', 'get_message_state', { msg_id: p })).toEqual(['ok', 'que']);
    const x = await L.send('pb', { param1: 'done', limit: 'pz' });
    await L.line('pz', [`pb/${w}`, `pb/${x}`]);

    killGroup(holderPid);
    const wPid = await L.scriptPid('pz-w');
    await L.line('pz', [`pb/${x}`]);
    expect(await L.finish('pb', holder)).toMatchObject({ state: 'err' });

    expect(await L.mgr.cmd('resume_queue', 'pa')).toEqual(['ok', 'pa']);
    // p was made before x: back in line, it goes ahead of x.
    const st = await L.line('pz', [`pa/${p}`, `pb/${x}`], 'pa resumed');
    expect(st!.waiting[0].since).toBe(idTime(p));
    expect(st!.holders.map((h) => h.ref)).toEqual([`pb/${w}`]);

    killGroup(wPid);
    expect(await L.finish('pb', w)).toMatchObject({ state: 'err' });
    expect(await L.finish('pa', p)).toMatchObject({ state: 'done' });
    expect(await L.finish('pb', x)).toMatchObject({ state: 'done' });
    const [pStart] = await L.starts('pa', p);
    const [xStart] = await L.starts('pb', x);
    expect(pStart).toBeLessThan(xStart);
    expect((await L.history('pa', p)).filter((e) => e.event).map((e) => e.event)).toEqual(['limit_wait', 'limit_wait', 'limit_grant']);
    await L.statusWhen('pz', (s) => s === undefined, 'pz to be free');
  });

  it('pausing a queue gives back a slot granted to a message it had no worker for; another queue takes it; after resume it runs', async () => {
    const holder = await L.send('pb', { param1: 'forever', param2: L.pidFile('pg-holder'), limit: 'pg' });
    const holderPid = await L.scriptPid('pg-holder');
    // g parks (it holds no worker while it waits), then an unlimited script takes pc's only worker.
    const g = await L.send('pc', { param1: 'done', limit: 'pg' });
    await L.line('pg', [`pc/${g}`]);
    const u = await L.send('pc', { param1: 'forever', param2: L.pidFile('pc-busy') });
    const uPid = await L.scriptPid('pc-busy');
    const w = await L.send('pb', { param1: 'slow', param2: '0.2', limit: 'pg' });
    await L.line('pg', [`pc/${g}`, `pb/${w}`]);

    // The holder goes: g is granted, but pc has no free worker to start it.
    killGroup(holderPid);
    await L.statusWhen('pg', (s) => s?.holders.map((h) => h.ref).join() === `pc/${g}` && s.waiting.length === 1, 'g granted');
    expect(await L.mgr.q('pc', 'get_message_state', { msg_id: g })).toEqual(['ok', 'que']);
    expect((await L.history('pc', g)).filter((e) => e.event).map((e) => e.event)).toEqual(['limit_wait', 'limit_grant']);

    expect(await L.mgr.cmd('pause_queue', 'pc')).toEqual(['ok', 'pc']);
    // The granted slot goes back and pb's waiter runs with it.
    expect(await L.finish('pb', w)).toMatchObject({ state: 'done' });
    expect(await L.mgr.q('pc', 'get_message_state', { msg_id: g })).toEqual(['ok', 'que']);
    await L.statusWhen('pg', (s) => s === undefined, 'pg to be free while pc is paused');

    expect(await L.mgr.cmd('resume_queue', 'pc')).toEqual(['ok', 'pc']);
    killGroup(uPid);
    expect(await L.finish('pc', g)).toMatchObject({ state: 'done' });
    const [wStart] = await L.starts('pb', w);
    const [gStart] = await L.starts('pc', g);
    expect(wStart).toBeLessThan(gStart);
    expect(await L.finish('pc', u)).toMatchObject({ state: 'err' });
    expect(await L.finish('pb', holder)).toMatchObject({ state: 'err' });
    await L.statusWhen('pg', (s) => s === undefined, 'pg to be free');
  });
});
