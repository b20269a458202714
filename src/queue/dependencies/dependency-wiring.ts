// Dependencies (rq-beyond §B8) wired into a queue: this queue as a dependent (waits) and as a dependency (outbox); its own messages are called directly, other queues through their sockets, other hosts of its fleet over HTTP.
import fs from 'node:fs';
import type { Logger } from 'pino';
import { queuePaths, rootPaths } from '../../config/paths.js';
import { RqError } from '../../errors.js';
import { refusalError } from '../../ipc/answer.js';
import { MgrClient } from '../../ipc/mgr-client.js';
import { isUrlRef } from '../../message/fleet-ref.js';
import { type HostInfo, hostUrl } from '../../message/message-id.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { DependencyOutbox } from './dependency-outbox.js';
import { DependencyWaits } from './dependency-waits.js';
import { FleetRefs } from './fleet-refs.js';
import type { Peer } from '../lifecycle/dup.js';
import type { LifecycleOps } from '../lifecycle/lifecycle-ops.js';
import type { WaitMoves } from '../index/wait-moves.js';
import type { MessageOps } from '../lifecycle/message-ops.js';
import type { QueueEvents } from '../status/queue-events.js';

export interface DependencyWiring {
  root: string;
  host: HostInfo;
  /** This host's advertised URL in its fleet (no trailing slash); absent outside a fleet. */
  fleetUrl?: string;
  peer: Peer;
  log: Logger;
  spool: QueueSpool;
  events: QueueEvents;
  moves: WaitMoves;
  ops: MessageOps;
  lifecycle: LifecycleOps;
  pump: () => void;
}

/** How long a question about the fleet waits for rq-mgr. */
const MGR_TIMEOUT_MS = 5000;

function split(ref: string): [string, string] {
  const i = ref.indexOf('/');
  return [ref.slice(0, i), ref.slice(i + 1)];
}

export function wireDependencies(d: DependencyWiring): { waits: DependencyWaits; outbox: DependencyOutbox } {
  const queueExists = (name: string) => fs.existsSync(queuePaths(d.root, name).dir);
  const self = d.spool.name;
  const fleet =
    d.fleetUrl === undefined
      ? null
      : new FleetRefs({
          selfUrl: d.fleetUrl,
          fleet: () => new MgrClient(rootPaths(d.root).mgrSock, MGR_TIMEOUT_MS).fleet(),
          credential: () => new MgrClient(rootPaths(d.root).mgrSock, MGR_TIMEOUT_MS).fleetCredential(),
        });
  // Both exist before either is called: each refers to the other only inside callbacks.
  const outbox: DependencyOutbox = new DependencyOutbox({
    spool: d.spool,
    events: d.events,
    log: d.log,
    locate: (id) => d.ops.locateAny(id),
    queueExists,
    notify: async (ref, payload) => {
      if (isUrlRef(ref)) return fleet ? fleet.notify(ref, payload) : 'ignored';
      const [queue, msgId] = split(ref);
      if (queue === self) return waits.resolve(msgId, payload.dependency, payload.state, payload.outcome);
      const a = await d
        .peer(queue)
        .dependencyResolved({ msg_id: msgId, ...payload })
        .catch((err: Error) => ({ ok: false as const, text: err.message }));
      return a.ok ? a.value : { unanswered: `queue ${queue}: ${a.text}` };
    },
  });
  const waits: DependencyWaits = new DependencyWaits({
    spool: d.spool,
    moves: d.moves,
    log: d.log,
    hostUrl: hostUrl(d.host),
    queueExists,
    ...(fleet ? { fleetRef: (ref: string, field: string) => fleet.canonical(ref, field) } : {}),
    exists: async (ref) => {
      if (isUrlRef(ref)) return fleet ? fleet.exists(ref) : false;
      const [queue, id] = split(ref);
      if (queue === self) return (await d.ops.locateAny(id)) !== null;
      const a = await d
        .peer(queue)
        .state(id)
        .catch((err: Error) => err.message);
      if (typeof a === 'string') return a;
      return a.ok || (a.code === 'RQ_ERR_NO_SUCH_MSG' ? false : a.text);
    },
    register: async (ref, dependent) => {
      if (isUrlRef(ref)) {
        if (!fleet) throw RqError.of('RQ_ERR_NO_FLEET');
        return fleet.register(ref, dependent);
      }
      const [queue, id] = split(ref);
      if (queue === self) return outbox.addDependent(id, dependent);
      const a = await d.peer(queue).addDependent(id, dependent);
      if (!a.ok) throw refusalError(a);
      return a.value;
    },
    fail: (msg, status) => d.lifecycle.finishWaiting(msg, status, 'dependency_failed', 'dependencies'),
    pump: d.pump,
  });
  return { waits, outbox };
}
