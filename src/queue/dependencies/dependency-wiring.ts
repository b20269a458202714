// Dependencies (rq-beyond §B8) wired into a queue: this queue as a dependent (waits) and as a dependency (outbox); its own messages are called directly, other queues through their sockets.
import fs from 'node:fs';
import type { Logger } from 'pino';
import { queuePaths } from '../../config/paths.js';
import { refusalError } from '../../ipc/answer.js';
import { type HostInfo, hostUrl } from '../../message/message-id.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { DependencyOutbox } from './dependency-outbox.js';
import { DependencyWaits } from './dependency-waits.js';
import type { Peer } from '../lifecycle/dup.js';
import type { LifecycleOps } from '../lifecycle/lifecycle-ops.js';
import type { WaitMoves } from '../index/wait-moves.js';
import type { MessageOps } from '../lifecycle/message-ops.js';
import type { QueueEvents } from '../status/queue-events.js';

export interface DependencyWiring {
  root: string;
  host: HostInfo;
  peer: Peer;
  log: Logger;
  spool: QueueSpool;
  events: QueueEvents;
  moves: WaitMoves;
  ops: MessageOps;
  lifecycle: LifecycleOps;
  pump: () => void;
}

function split(ref: string): [string, string] {
  const i = ref.indexOf('/');
  return [ref.slice(0, i), ref.slice(i + 1)];
}

export function wireDependencies(d: DependencyWiring): { waits: DependencyWaits; outbox: DependencyOutbox } {
  const queueExists = (name: string) => fs.existsSync(queuePaths(d.root, name).dir);
  const self = d.spool.name;
  // Both exist before either is called: each refers to the other only inside callbacks.
  const outbox: DependencyOutbox = new DependencyOutbox({
    spool: d.spool,
    events: d.events,
    log: d.log,
    locate: (id) => d.ops.locateAny(id),
    queueExists,
    notify: async (ref, payload) => {
      const [queue] = split(ref);
      if (queue === self) return waits.resolve(payload.msg_id, payload.dependency, payload.state, payload.outcome);
      const a = await d
        .peer(queue)
        .dependencyResolved(payload)
        .catch(() => null);
      return a?.ok ? a.value : null;
    },
  });
  const waits: DependencyWaits = new DependencyWaits({
    spool: d.spool,
    moves: d.moves,
    log: d.log,
    hostUrl: hostUrl(d.host),
    queueExists,
    exists: async (queue, id) => {
      if (queue === self) return (await d.ops.locateAny(id)) !== null;
      const a = await d
        .peer(queue)
        .state(id)
        .catch((err: Error) => err.message);
      if (typeof a === 'string') return a;
      return a.ok || (a.code === 'RQ_ERR_NO_SUCH_MSG' ? false : a.text);
    },
    register: async (ref, dependent) => {
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
