// FleetLimits through an etcd outage, against a real etcd: a pass with nothing to ask does not take etcd as back, and a host
// left without a lease still hears that etcd answers again (its stall then says it holds no lease).
import { Writable } from 'node:stream';
import pino from 'pino';
import { expect, it } from 'vitest';
import { FleetLimits } from '../../src/fleet/fleet-limits.js';
import { etcdForFile } from '../helpers/etcd.js';
import { waitFor } from '../helpers/rq-root.js';
import { KEYS } from './fleet-harness.js';

const e = etcdForFile({ failoverMs: 300 });

it(
  'holding every place of its lines while etcd stops: retries say nothing is back until it is; a lease lost meanwhile still hears it back',
  { timeout: 60_000 },
  async () => {
    const said: string[] = [];
    const log = pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _enc, done) => (said.push(String(JSON.parse(chunk.toString()).msg)), done()) }));
    const limits = new FleetLimits({ store: e.store, keys: KEYS, host: 'a', log });
    let granted = false;
    limits.attach(() => (granted = true));
    const lease = await e.store.grant(30, { failing: () => undefined, alive: () => undefined, lost: () => undefined });
    try {
      limits.leased(lease);
      limits.sync('deploy', { concurrency: 1, waiting: ['q/1'], holders: [] });
      await waitFor(() => granted, 'the place granted');
      limits.sync('deploy', { concurrency: 1, waiting: [], holders: ['q/1'] });
      await e.etcd.stop();
      // Every place held, nothing to put or read: each retry asks etcd one small read, which fails while it is down.
      await waitFor(() => said.filter((m) => m.endsWith('trying again')).length >= 3, 'three retries');
      expect(said.filter((m) => !m.endsWith('trying again'))).toEqual([
        'fleet limits: etcd does not answer; no run needing a fleet slot starts on this host until it is back',
      ]);
      expect(limits.stalled()).toMatch(/^etcd (does not|did not) answer/);
      // The lease lost (its host's name taken meanwhile, say): no pass has a lease to go under, and etcd's return is still heard.
      limits.leased(null);
      await e.etcd.run();
      await waitFor(() => said.includes('fleet limits: etcd answers again; runs waiting for fleet slots are served again'), 'etcd heard back', 20_000);
      expect(limits.stalled()).toBe('this host holds no lease in etcd now (it is not a member of the fleet)');
    } finally {
      await limits.close();
      await lease.revoke().catch(() => lease.release());
    }
  },
);
