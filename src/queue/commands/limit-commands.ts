// The queue socket's commands from rq-mgr's limits arbiter (rq-beyond §B12.3): limit_granted, limit_held.
import { RqError, invalidField } from '../../errors.js';
import { type Args, msgId } from './command-args.js';
import type { Queue } from '../queue.js';

/** Answered in any admin state: a DOWN queue has withdrawn its waiters, and says so. */
export const LIMIT_COMMANDS: Record<string, (q: Queue, args: Args) => Promise<unknown>> = {
  limit_granted: async (q, args) => {
    const id = msgId(args);
    if (typeof args.key !== 'string') throw invalidField('key', 'a limit key', args.key);
    if (!q.limits.onGranted(id, args.key)) throw RqError.of('RQ_ERR_NOT_WAITING_SLOT');
    return ['ok'];
  },
  limit_held: async (q) => ['ok', q.limits.held()],
};
