// Delivers a timer's message: create_message on the local queue socket of its destination.
import fs from 'node:fs';
import { queuePaths } from '../config/paths.js';
import type { CreateFields } from '../message/message.js';
import { queueCommand } from '../ipc/rq1.js';
import { isValidQueueName } from '../message/names.js';

export type DeliveryResult = { ok: true; id: string } | { ok: false; error: string };
export type Deliver = (fields: CreateFields) => Promise<DeliveryResult>;

/** Remote destinations go through the local relay queue (spec §8, §11.1); anything else is a queue name. */
export function queueForDest(dest: string): string {
  return /^https?:/i.test(dest) ? 'relay' : dest;
}

export interface DeliveryDeps {
  root: string;
  /** How long a queue may take to answer before the attempt counts as failed. */
  timeoutMs: number;
}

export function createDelivery(deps: DeliveryDeps): Deliver {
  return async (fields) => {
    const queue = queueForDest(fields.dest);
    if (!isValidQueueName(queue)) return { ok: false, error: `dest ${JSON.stringify(fields.dest)} is neither a queue name nor an http(s) URL` };
    const paths = queuePaths(deps.root, queue);
    // The classic client refuses a queue without a directory; say so rather than "no socket".
    if (!fs.existsSync(paths.dir)) return { ok: false, error: `queue ${queue} not found (no directory ${paths.dir})` };
    let reply: unknown;
    try {
      reply = await queueCommand(paths.sock, 'create_message', fields, { timeoutMs: deps.timeoutMs });
    } catch (err) {
      return { ok: false, error: `queue ${queue}: ${(err as Error).message}` };
    }
    if (Array.isArray(reply) && reply[0] === 'ok') return { ok: true, id: String(reply[1]) };
    const text = Array.isArray(reply) && reply.length > 1 ? String(reply[1]) : JSON.stringify(reply);
    return { ok: false, error: `queue ${queue} refused the message: ${text}` };
  };
}
