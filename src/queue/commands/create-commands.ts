// The queue socket's creates: create_message, prep_message, single_que, and create_messages (a batch under one group commit).
import { counted, invalidField, RqError } from '../../errors.js';
import { type CreateFields, checkBatchMode, normaliseCreate } from '../../message/message.js';
import { RELAY_QUEUE, checkFleetDest } from '../../message/fleet-dest.js';
import { isRemoteUrl } from '../../message/relay-dests.js';
import { relayTarget } from '../../message/relay-target.js';
import { MAX_CREATE_BATCH } from '../../ipc/queue-client.js';
import { fingerprint, paramFingerprint } from '../../spool/message-bodies.js';
import { type Connection, refusalOf } from '../../ipc/reply-codes.js';
import type { Args } from './command-args.js';
import type { Queue } from '../queue.js';

/** `conn`: the asking connection, whose per-message refusals carry their codes when it asked for them. */
type Handler = (q: Queue, args: Args, conn?: Connection) => Promise<unknown>;

/** Creates made between two turns of the event loop, so a big batch never stops the queue answering ping or finishing runs. */
const SLICE = 256;

/** A create's fields, read and checked against the queue's limits and the dependencies' queues; throws the refusal. */
async function checked(q: Queue, input: unknown): Promise<CreateFields> {
  const fields = normaliseCreate(input);
  checkFleetDest(fields.dest, { inFleet: q.inFleet, queue: q.name });
  // A URL the relay could never deliver (no /q/<queue>, a bad name) is refused now, as in a batch, not failed at its run.
  if (q.name === RELAY_QUEUE && isRemoteUrl(fields.dest)) relayTarget(fields.dest);
  await q.limits.checkCreate(fields);
  if (fields.depends) fields.depends = await q.waits.check(fields.depends);
  return fields;
}

function createHandler(mode: 'commit' | 'prep' | 'single'): Handler {
  return async (q, args) => {
    const fields = await checked(q, args);
    if (mode === 'single') {
      const same = q.index.nextQueued((m) =>
        ['param1', 'param2', 'param3', 'param4'].every((p) => paramFingerprint(m, p) === fingerprint(fields[p as 'param1'])),
      );
      if (same) return ['ok', q.fullId(same.msg_id)];
    }
    const { id } = await q.ops.createOnce(fields, mode !== 'prep');
    return ['ok', q.fullId(id)];
  };
}

/**
 * `{messages: [...]}`: every message is checked before any is made, so one bad message refuses the
 * whole batch, naming its index. The creates then go out together and share the journal's group
 * commit; the reply has one `["ok", full id]` (or `["fail", text]`, a disk that refused it, with its
 * code to a client that asked) per message, in order. A batch refused for one message carries, after
 * its code, the message's index and its own refusal, so a client names the message without reading the text.
 */
const createMessages: Handler = async (q, args, conn = { codes: false }) => {
  const list = args.messages;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_CREATE_BATCH) {
    throw invalidField('messages', `an array of 1 to ${MAX_CREATE_BATCH} message objects`, Array.isArray(list) ? counted(list.length, 'messages') : list);
  }
  const all: CreateFields[] = [];
  for (const [i, input] of list.entries()) {
    try {
      checkBatchMode(input);
      all.push(await checked(q, input));
    } catch (err) {
      if (err instanceof RqError) throw RqError.of('RQ_ERR_BATCH_MESSAGE', i, err.message).withDetail({ index: i, reason: err.message, code: err.code });
      throw err;
    }
  }
  const made: Promise<unknown>[] = [];
  for (const [i, fields] of all.entries()) {
    if (i > 0 && i % SLICE === 0) await new Promise((r) => setImmediate(r));
    made.push(
      q.ops.createOnce(fields, true).then(
        ({ id }) => ['ok', q.fullId(id)],
        (err: Error) => refusalOf(conn, err instanceof RqError ? err : new RqError('RQ_ERR_INTERNAL', err.message)),
      ),
    );
  }
  return ['ok', await Promise.all(made)];
};

export const CREATE_COMMANDS: Record<string, Handler> = {
  create_message: createHandler('commit'),
  prep_message: createHandler('prep'),
  single_que: createHandler('single'),
  create_messages: createMessages,
};
