// Test harness for fleet-wide limits: three hosts of one etcd whose queue `d` takes slots of the fleet key `deploy` (2), a local key beside it, and what etcd's line of `deploy` holds.
import fs from 'node:fs/promises';
import path from 'node:path';
import { addQueue } from '../helpers/rq-root.js';
import { MgrProc } from '../helpers/mgr-proc.js';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { Limits, writeLimits } from '../mgr/limits-harness.js';
import { type Host, type HostEtcd, KEYS, startHost } from './fleet-harness.js';

export const KEY = 'deploy';
export const SLOTS = 2;
export const LIMITS = { [KEY]: { concurrency: SLOTS, scope: 'fleet' }, loc: 1 };

/** A fleet host with queue `d` (3 workers, every message under `deploy`) and q1 (no limit), settled. */
export async function startLimitedHost(name: string, etcd: HostEtcd, groups: number[]): Promise<{ h: Host; L: Limits }> {
  const h = await startHost(name, etcd, async (root) => {
    await fs.mkdir(path.join(root, 'pids'));
    await writeLimits(root, LIMITS);
    await addQueue(root, 'd', { num_workers: 3, extra: { limit: KEY } });
  });
  const L = new Limits(h.root.root, h.mgr, groups);
  await h.mgr.waitQueueUp('d');
  await L.settled();
  return { h, L };
}

/** rq-mgr started again on the same root (after a SIGKILL), settled. */
export async function restartHost(h: Host, L: Limits): Promise<void> {
  h.mgr = await MgrProc.start(h.root.root);
  L.mgr = h.mgr;
  await h.mgr.waitQueueUp('d');
  await L.settled();
}

/** etcd's line of `deploy`: each waiter key as `<host>/<queue>/<msg_id>` (in key order). */
export async function etcdLine(store: EtcdStore): Promise<string[]> {
  const prefix = KEYS.waiters(KEY);
  const kvs = await store.getPrefix(prefix);
  return kvs.map((kv) => kv.key.slice(prefix.length));
}
