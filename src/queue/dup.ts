// The `dup <delay>-<flag>-<dest>` pipe command (spec §4.6): a copy of the running message, here or in another local queue.
import fs from 'node:fs';
import path from 'node:path';
import { type CreateFields, pickFields } from '../message/message.js';
import { isValidQueueName } from '../message/names.js';
import { attachmentNames } from '../spool/attachments.js';
import type { QueueSpool } from '../spool/queue-spool.js';
import type { MessageIndex } from './message-index.js';
import { parseDup } from './pipe-protocol.js';
import type { ScriptRun } from './script-run.js';

/** Sends one command to another local queue's socket; rejects when it does not answer. */
export type PeerCall = (queue: string, command: string, arg: unknown) => Promise<unknown>;

// force_remote is not carried by a dup (spec §4.6).
const DUP_FIELDS = ['orig_msg_id', 'max_count', 'src', 'param1', 'param2', 'param3', 'param4', 'post_run_webhook'] as const;

export interface DupDeps {
  root: string;
  queue: () => string;
  spool: QueueSpool;
  index: MessageIndex;
  peer: PeerCall;
  now: () => number;
  /** A copy landed in this queue's que. */
  queued: () => void;
}

/** Handles one dup line and returns the one reply line for fd 4. */
export async function dup(d: DupDeps, run: ScriptRun, arg: string | null): Promise<string> {
  const req = parseDup(arg);
  if (!req) return `fail dup failed - expected <delay>-<flag>-<dest>, received ${JSON.stringify(arg)}`;
  const target = req.dest.startsWith('http') ? 'relay' : req.dest;
  if (!isValidQueueName(target) || !fs.existsSync(path.join(d.root, 'queues', target))) return `fail couldn't connect to queue - ${target}`;
  const fields = { ...pickFields(run.msg, DUP_FIELDS), dest: req.dest, count: 0, due: Math.floor(d.now() / 1000) + req.delay };
  const names = await attachmentNames(run.dir!);
  try {
    if (target === d.queue()) {
      const copy = await d.spool.createWithAttachments(fields, names.length ? run.dir! : null);
      d.index.enqueue(copy);
      d.queued();
      return `ok ${d.spool.fullId(copy.msg_id)}`;
    }
    return await toPeer(d.peer, target, fields, names.map((n) => path.join(run.dir!, 'attach', n)));
  } catch (err) {
    return `fail dup failed - ${(err as Error).message}`;
  }
}

async function toPeer(peer: PeerCall, target: string, fields: CreateFields, files: string[]): Promise<string> {
  const call = async (command: string, arg: unknown, stage: string): Promise<string> => {
    const reply = await peer(target, command, arg);
    if (Array.isArray(reply) && reply[0] === 'ok') return String(reply[1]);
    const text = Array.isArray(reply) ? String(reply[1]) : JSON.stringify(reply);
    throw new Error(stage ? `${stage} fail ${text}` : text);
  };
  if (!files.length) return `ok ${await call('create_message', fields, '')}`;
  const full = await call('prep_message', fields, 'prep');
  const id = full.slice(full.lastIndexOf('/') + 1);
  for (const f of files) await call('attach_message', { msg_id: id, pathname: f }, 'attach');
  await call('commit_message', { msg_id: id }, 'commit');
  return `ok ${full}`;
}
