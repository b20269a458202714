// A host's queues as its fleet record shows them follow its web, the only way the other hosts reach them: DOWN while the web does not
// serve (its port held by another program, its process killed), UP once it does. So no pool host is chosen, nor a pool woken, for a
// queue behind a web that refuses the delivery.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProc } from '../helpers/etcd.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { waitFor } from '../helpers/rq-root.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { type Host, fleetRoot, recordWhere, stopFleet } from './fleet-harness.js';

let etcd: EtcdProc;
let store: EtcdStore;
let host: Host | undefined;
let holder: net.Server | undefined;

describe("a host's queues in its fleet record follow its web", { timeout: 90_000 }, () => {
  beforeAll(async () => {
    etcd = await EtcdProc.start();
    store = await EtcdStore.open({ endpoints: [etcd.url] });
  }, 30_000);

  afterAll(async () => {
    if (holder?.listening) await new Promise((r) => holder!.close(r));
    await stopFleet(host ? [host] : [], store, etcd);
  }, 60_000);

  it('read DOWN while the web port is held or the web is killed, and UP once it serves', async () => {
    const root = await fleetRoot('a', etcd.url);
    // Another program on the web's port: the queues start and serve, the web cannot.
    holder = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => holder!.listen(root.port, '127.0.0.1', r));
    host = { name: 'a', root, mgr: await MgrProc.start(root.root) };
    await host.mgr.waitQueueUp('q1');
    // Its figures read (2 workers): the queue itself is UP, the web stands between it and the others.
    const held = await recordWhere(store, 'a', (r) => r.queues.q1?.workers === 2, 'q1 read');
    expect(held.queues.q1).toEqual({ status: 'DOWN', ready: 0, running: 0, workers: 2 });

    await new Promise((r) => holder!.close(r));
    await recordWhere(store, 'a', (r) => r.queues.q1?.status === 'UP', 'q1 UP once the web serves', 30_000);
    // UP is only said once the web answers where the others are told to send.
    expect((await fetch(`http://127.0.0.1:${root.port}/fleet.json`)).status).toBe(200);

    // A web that dies takes its queues out until its restart serves.
    const status = (await host.mgr.cmd('status')) as [string, Record<string, { pid: number }>];
    const webPid = status[1]['[web]'].pid;
    process.kill(webPid, 'SIGKILL');
    await recordWhere(store, 'a', (r) => r.queues.q1?.status === 'DOWN', 'q1 DOWN with the web killed');
    await recordWhere(store, 'a', (r) => r.queues.q1?.status === 'UP', 'q1 UP with the web back', 30_000);
    await waitFor(async () => (await fetch(`http://127.0.0.1:${root.port}/fleet.json`).catch(() => null))?.status === 200, 'the web back');
  });
});
