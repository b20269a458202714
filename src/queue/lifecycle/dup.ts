// The `dup <delay>-<flag>-<dest>` pipe command (spec §4.6): a copy of the running message, here or in another local queue.
import { dupFail, dupOk } from '../../ipc/dup-reply.js';
import { RqError } from '../../errors.js';
import fs from 'node:fs';
import path from 'node:path';
import { type CreateFields, type Message, pickFields } from '../../message/message.js';
import { isRelayedDest } from '../../message/relay-dests.js';
import { isValidQueueName } from '../../message/names.js';
import { attachmentNames } from '../../spool/attachments.js';
import { createCopy } from '../../spool/message-copy.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import { parseDup } from '../rules/pipe-protocol.js';
import type { Answer } from '../../ipc/answer.js';
import type { QueueClient } from '../../ipc/queue-client.js';
import type { ScriptRun } from '../launch/script-run.js';
import { JOB_FIELDS } from '../../message/job-fields.js';
import { RUN_LIMIT_FIELDS } from '../../message/run-limits.js';
import { TRACE_FIELDS } from '../../message/trace-context.js';

/** The client of another local queue's socket (its calls reject when it does not answer). */
export type Peer = (queue: string) => QueueClient;

// force_remote is not carried by a dup (spec §4.6); the trace context is, as the copy's run continues the trace of the run that made it.
const DUP_FIELDS = [
  'orig_msg_id',
  'max_count',
  'src',
  'param1',
  'param2',
  'param3',
  'param4',
  'post_run_webhook',
  'tags',
  ...TRACE_FIELDS,
  ...JOB_FIELDS,
  ...RUN_LIMIT_FIELDS,
] as const;

export interface DupDeps {
  root: string;
  queue: () => string;
  spool: QueueSpool;
  peer: Peer;
  now: () => number;
  /** A copy landed in this queue's que: memory takes it and observers hear of it as created (Transitions.created). */
  queued: (copy: Message) => void;
}

/** Handles one dup line and returns the one reply line for fd 4. */
export async function dup(d: DupDeps, run: ScriptRun, arg: string | null): Promise<string> {
  const req = parseDup(arg);
  if (!req) return dupFail(`dup failed - expected <delay>-<flag>-<dest>, received ${JSON.stringify(arg)}`);
  const target = isRelayedDest(req.dest) ? 'relay' : req.dest;
  if (!isValidQueueName(target) || !fs.existsSync(path.join(d.root, 'queues', target))) return dupFail(`couldn't connect to queue - ${target}`);
  const fields = { ...pickFields(run.msg, DUP_FIELDS), dest: req.dest, count: 0, due: Math.floor(d.now() / 1000) + req.delay };
  const names = await attachmentNames(run.dir!);
  try {
    if (target === d.queue()) {
      const copy = await createCopy(d.spool, fields, names.length ? run.dir! : null);
      d.queued(copy);
      return dupOk(d.spool.fullId(copy.msg_id));
    }
    return await toPeer(
      d.peer(target),
      fields,
      names.map((n) => path.join(run.dir!, 'attach', n)),
    );
  } catch (err) {
    return dupFail(`dup failed - ${(err as Error).message}`);
  }
}

/**
 * Creates the copy through the peer's socket (prep, attach, commit when it has attachments); the error
 * text is the dup's reply. A draft whose attachment the peer refused is deleted there (best effort), as
 * a copy in the dup's own queue is: only this dup could commit it. After a refused commit it is left
 * (its state is the peer's to say), and the cleaner removes it in time.
 */
async function toPeer(peer: QueueClient, fields: CreateFields, files: string[]): Promise<string> {
  const value = (a: Answer<string>, stage: string): string => {
    if (a.ok) return a.value;
    const text = a.code === 'RQ_ERR_PROTOCOL' ? JSON.stringify(a.raw) : a.text;
    throw RqError.of('RQ_ERR_PROTOCOL', stage ? `${stage} fail ${text}` : text);
  };
  if (!files.length) return dupOk(value(await peer.create(fields), ''));
  const full = value(await peer.create(fields, 'prep_message'), 'prep');
  const id = full.slice(full.lastIndexOf('/') + 1);
  for (const f of files) {
    const attached = await peer.attach(id, f);
    if (!attached.ok) await peer.act('delete_message', id).catch(() => undefined);
    value(attached, 'attach');
  }
  value(await peer.commit(id), 'commit');
  return dupOk(full);
}
