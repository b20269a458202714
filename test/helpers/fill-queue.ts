// Messages made straight on disk (the spool, no queue process and no socket round trip per message): fixtures of thousands for list, bulk and benchmark runs.
import { QueueSpool } from '../../src/spool/queue-spool.js';
import { mapLimit } from '../../src/spool/map-limit.js';
import type { State } from '../../src/message/states.js';
import { type QueueDef, addQueue } from './rq-root.js';

export interface FillOptions {
  /** Where each message ends: que (committed) or moved on into done or err. */
  state: (i: number) => Extract<State, 'que' | 'done' | 'err'>;
  fields?: (i: number) => Record<string, unknown>;
  /** Creation time of message i (its id's stamp); the real clock when absent. */
  createdAt?: (i: number) => number;
  queue?: QueueDef;
  lanes?: number;
}

/** Creates queue `q` (if need be) and `count` messages in it, before its process starts; their ids, in creation order. */
export async function fillQueue(root: string, q: string, count: number, opts: FillOptions): Promise<string[]> {
  await addQueue(root, q, opts.queue ?? {});
  let clock = 0;
  const spool = new QueueSpool(root, q, { host: { host: '127.0.0.1', port: 3333, root: '/' }, now: () => clock || Date.now() });
  const ids: string[] = new Array(count);
  // One at a time per stamp when times are given (the clock is shared), else in parallel lanes.
  const lanes = opts.createdAt ? 1 : (opts.lanes ?? 32);
  await mapLimit([...Array(count).keys()], lanes, async (i) => {
    clock = opts.createdAt?.(i) ?? 0;
    const m = await spool.create({ dest: q, ...opts.fields?.(i) } as never, { commit: true });
    ids[i] = m.msg_id;
    const to = opts.state(i);
    if (to !== 'que') await spool.move(m.msg_id, 'que', to, { actor: 'fixture', durable: false });
  });
  await spool.close();
  return ids;
}
