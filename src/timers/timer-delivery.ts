// Delivers a timer's message: create_message on the local queue socket of its destination.
import fs from 'node:fs';
import { queuePaths } from '../config/paths.js';
import type { CreateFields } from '../message/message.js';
import type { Answer } from '../ipc/answer.js';
import { QueueClient } from '../ipc/queue-client.js';
import { mayHaveArrived } from '../ipc/socket-client.js';
import { untilQueueAnswers } from '../ipc/until-answers.js';
import { isValidQueueName } from '../message/names.js';
import { isRelayedDest } from '../message/relay-dests.js';

export type DeliveryResult = { ok: true; id: string } | { ok: false; error: string };
export type Deliver = (fields: CreateFields) => Promise<DeliveryResult>;

/** Remote and pool destinations go through the local relay queue (spec §8, §11.1); anything else is a queue name. */
export function queueForDest(dest: string): string {
  return isRelayedDest(dest) ? 'relay' : dest;
}

export interface DeliveryDeps {
  root: string;
  /** How long a queue may take to answer before the attempt counts as failed. */
  timeoutMs: number;
  /**
   * How long a delivery waits for a queue whose process is not listening (yet): rq-mgr starts the
   * timers and the queues together, and a timer that fires at once must not fail on a queue that
   * is a second from answering.
   */
  startWaitMs: number;
  /** Aborted when the daemon stops: a delivery waiting for a queue gives up at once. */
  stopping?: AbortSignal;
}

export function createDelivery(deps: DeliveryDeps): Deliver {
  return async (fields) => {
    const queue = queueForDest(fields.dest);
    if (!isValidQueueName(queue)) return { ok: false, error: `dest ${JSON.stringify(fields.dest)} is neither a queue name, an http(s) URL nor fleet:<queue>` };
    const paths = queuePaths(deps.root, queue);
    // The classic client refuses a queue without a directory; say so rather than "no socket".
    if (!fs.existsSync(paths.dir)) return { ok: false, error: `queue ${queue} not found (no directory ${paths.dir})` };
    const client = QueueClient.oneShot(paths.sock, { timeoutMs: deps.timeoutMs });
    let r: Answer<string>;
    try {
      r = await client.create(fields).catch(async (err: unknown) => {
        // Not connected: the queue never saw it, so asking again once it answers cannot make a duplicate.
        if (mayHaveArrived(err) || !(await untilQueueAnswers(() => client.ping(), deps.startWaitMs, Date.now, deps.stopping))) throw err;
        return client.create(fields);
      });
    } catch (err) {
      return { ok: false, error: `queue ${queue}: ${(err as Error).message}` };
    }
    if (r.ok) return { ok: true, id: r.value };
    return { ok: false, error: `queue ${queue} refused the message: ${r.code === 'RQ_ERR_PROTOCOL' ? JSON.stringify(r.raw) : r.text}` };
  };
}
