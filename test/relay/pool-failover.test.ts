// A pool host that dies while the fleet still lists it up (its lease outlives it): the relay run that meets its
// refusal sends the message to another host at once, with no resend; with no other host, it waits naming the failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/rq-root.js';
import { EtcdProc } from '../helpers/etcd.js';
import { TTL_S, killRoot } from '../fleet/fleet-harness.js';
import { Host, RECORD_SH } from './hosts.js';
import { POOL, fleetConfig, poolMessages, poolSeen } from './pool-hosts.js';

/** Long enough that the dead host stays listed up for the whole test: only a refusal can tell the relay. */
const LONG_TTL_S = 120;

let etcd: EtcdProc;
let sender: Host;
let dead: Host;
let live: Host;

/** A host of the fleet running the pool queue with `workers` (the most free wins the choice), its lease `ttlS` long. */
const poolHost = (name: string, workers: number, ttlS: number) =>
  Host.start({ config: fleetConfig(name, etcd.url, {}, ttlS), queues: { [POOL]: { script: RECORD_SH, num_workers: workers } } });

beforeAll(async () => {
  etcd = await EtcdProc.start();
  [sender, dead, live] = await Promise.all([Host.start({ config: fleetConfig('s', etcd.url) }), poolHost('x', 4, LONG_TTL_S), poolHost('y', 1, TTL_S)]);
  await poolSeen(sender, { x: 'UP', y: 'UP' }, 'x and y take the pool');
  await killRoot(dead.root, dead.mgr!.child.pid!, 'x');
  dead.mgr = null;
}, 90_000);

afterAll(async () => {
  await Promise.all([sender?.stop(), dead?.stop(), live?.stop()]);
  await etcd?.cleanup();
}, 60_000);

describe('a pool host dead but still listed', { timeout: 60_000 }, () => {
  it('the run that finds it refusing chooses another host at once: relayed on its first run, done there', async () => {
    const id = await sender.send('relay', { dest: `fleet:${POOL}`, param1: 'failover' });
    const m = await sender.waitState('relay', id, ['relayed']);
    // No resend: the same run went on to y.
    expect(Number(m.count ?? 0)).toBe(0);
    const log = await sender.stdio('relay', id);
    expect(log).toMatch(/pool: x failed before any commit went there \(.*ECONNREFUSED.*\); trying another host now/);
    expect(log).toContain(`pool ${POOL}: chose y`);
    await waitFor(async () => (await poolMessages(live, 'done')).some((d) => d.token === 'failover'), 'done on y');
    // x was listed up all along: the choice came from its refusal, not from its lease ending.
    await poolSeen(sender, { x: 'UP' }, 'x still listed');
  });

  it('with no other host taking the queue, it waits and says why the dead one failed', async () => {
    expect(await live.mgr!.cmd('pause_queue', POOL)).toEqual(['ok', POOL]);
    await poolSeen(sender, { x: 'UP', y: 'PAUSE' }, 'y paused');
    const id = await sender.send('relay', { dest: `fleet:${POOL}`, param1: 'alone' });
    const m = await waitFor(
      async () => {
        const msg = (await sender.q('relay', 'get_message', { msg_id: id }))[1];
        return Number(msg.count) >= 1 && msg.state === 'que' ? msg : null;
      },
      'a resend',
      30_000,
      100,
    );
    expect(m.status).toContain('ECONNREFUSED');
    expect(await live.mgr!.cmd('resume_queue', POOL)).toEqual(['ok', POOL]);
    await sender.waitState('relay', id, ['relayed'], 40_000);
  });
});
