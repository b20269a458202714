// Pool harness: rq hosts with the built-in queues joined to one real etcd as a fleet, a pool queue on some, and what a host's relay queue holds.
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '../helpers/rq-root.js';
import { FLEET, TTL_S } from '../fleet/fleet-harness.js';
import type { FleetView } from '../../src/ipc/fleet-reply.js';
import { Host, RECORD_SH } from './hosts.js';

export const POOL = 'work';

/** A host of the fleet as `name`; with `pool`, it runs the pool queue (two workers, the far-side fixture that answers done). */
export function fleetHost(name: string, etcdUrl: string, pool: boolean): Promise<Host> {
  return Host.start({ config: fleetConfig(name, etcdUrl), queues: pool ? { [POOL]: { script: RECORD_SH, num_workers: 2 } } : {} });
}

/** config.json's `fleet` block joining the test fleet as `name` (with `more` config keys, and a lease of `ttlS`), from the host's port. */
export function fleetConfig(name: string, etcdUrl: string, more: Record<string, unknown> = {}, ttlS = TTL_S): (port: number) => Record<string, unknown> {
  return (port) => ({ fleet: { name: FLEET, etcd: [etcdUrl], host: name, advertise: `http://127.0.0.1:${port}/`, lease_ttl_s: ttlS }, ...more });
}

/** Waits until `from`'s rq-mgr sees the pool queue of each host in `statuses` with that status (absent: not in the fleet). */
export function poolSeen(from: Host, statuses: Record<string, string | null>, label: string): Promise<FleetView> {
  return waitFor(
    async () => {
      const r = await from.mgr!.cmd('fleet');
      if (r[0] !== 'ok') return null;
      const view = r[1] as FleetView;
      const ok = Object.entries(statuses).every(([name, status]) => {
        const h = view.hosts.find((x) => x.host === name && x.state === 'up');
        return status === null ? h === undefined : h?.queues[POOL]?.status === status;
      });
      return ok ? view : null;
    },
    `the fleet as the sender sees it: ${label}`,
    15_000,
    50,
  );
}

/** A message with one attachment of its own bytes, prepped and committed in `from`'s relay queue; returns its id and the attachment's md5. */
export async function sendWithAttachment(from: Host, dir: string, token: string): Promise<{ id: string; md5: string }> {
  const bytes = crypto.randomBytes(4096 + crypto.randomInt(4096));
  const file = path.join(dir, `${token}.bin`);
  await fsp.writeFile(file, bytes);
  const prep = await from.q('relay', 'prep_message', { dest: `fleet:${POOL}`, param1: token });
  if (prep[0] !== 'ok') throw new Error(`prep_message: ${JSON.stringify(prep)}`);
  const id = String(prep[1]).split('/').pop()!;
  const att = await from.q('relay', 'attach_message', { msg_id: id, pathname: file });
  if (att[0] !== 'ok') throw new Error(`attach_message: ${JSON.stringify(att)}`);
  const commit = await from.q('relay', 'commit_message', { msg_id: id });
  if (commit[0] !== 'ok') throw new Error(`commit_message: ${JSON.stringify(commit)}`);
  return { id, md5: crypto.createHash('md5').update(bytes).digest('hex') };
}

/** Every message of the pool queue on `h` in `state`: its param1 and the md5 of each attachment, read from its directory. */
export async function poolMessages(h: Host, state: string): Promise<{ token: string; md5s: string[] }[]> {
  const out = [];
  for (const id of (await h.q(POOL, 'messages', { state, limit: 100_000 })) as (string | [string])[]) {
    const m = (await h.q(POOL, 'get_message', { msg_id: Array.isArray(id) ? id[0] : id }))[1];
    const attach = path.join(h.root, m.path, 'attach');
    const names = fs.existsSync(attach) ? (await fsp.readdir(attach)).filter((n) => !n.startsWith('.')) : [];
    const md5s = names.map((n) =>
      crypto
        .createHash('md5')
        .update(fs.readFileSync(path.join(attach, n)))
        .digest('hex'),
    );
    out.push({ token: String(m.param1), md5s });
  }
  return out;
}

/** How many messages of `from`'s relay queue are in `state`. */
export async function relayCount(from: Host, state: string): Promise<number> {
  return ((await from.q('relay', 'messages', { state, limit: 100_000 })) as unknown[]).length;
}
