// How the rq tool asks one queue of its root (through the typed client) and prints the classic reply line.
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RqError, isRqError, shown } from '../errors.js';
import { queuePaths, rootPaths } from '../config/paths.js';
import { queueNameFitProblem, queueNameRoom } from '../config/socket-paths.js';
import type { Answer } from '../ipc/answer.js';
import { partialOf } from '../ipc/partial-reply.js';
import { QueueClient } from '../ipc/queue-client.js';
import { mayHaveArrived } from '../ipc/socket-client.js';
import { untilQueueAnswers } from '../ipc/until-answers.js';
import { MgrClient, type WorkerInfo } from '../ipc/mgr-client.js';
import { closest } from '../message/nearest-name.js';

/** `cli:$USER` (else the account's name): who asked, for the message's history and `cancel.by`. */
export function actor(env: NodeJS.ProcessEnv): string {
  return `cli:${(env.USER ?? env.LOGNAME ?? os.userInfo().username).slice(0, 60)}`;
}

/** A busy queue may be fsyncing a burst of messages; a dead one fails at connect, long before this. */
const REPLY_TIMEOUT_MS = 30_000;

/**
 * Asks a queue of the root through the typed client; a name too long for this root's socket paths
 * is refused with the limit, a queue without a directory as the classic client refuses it, a silent
 * one with RQ_ERR_NO_REPLY naming it.
 */
export async function ask<T>(root: string, name: string, call: (c: QueueClient) => Promise<Answer<T>>, timeoutMs = REPLY_TIMEOUT_MS): Promise<Answer<T>> {
  // Its socket path cut short could be another queue's: no such name is a queue of this root.
  const unfit = queueNameFitProblem(queueNameRoom(root), name);
  if (unfit) throw RqError.of('RQ_ERR_INVALID_QUEUE_NAME', unfit);
  const p = queuePaths(root, name);
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(p.dir);
  } catch {
    st = undefined;
  }
  // A link just made in scandir/ becomes a queue within a second: a command pasted right after it waits for that.
  if (!st?.isDirectory() && !(await starting(root, name, p.sock))) throw await noQueue(root, name);
  let a: Answer<T>;
  try {
    a = await call(QueueClient.oneShot(p.sock, { timeoutMs })).catch(async (err: unknown) => {
      // Not sent: a queue rq-mgr is starting (a link just made in scandir/) is waited for, then asked again; nothing can be made twice.
      if (mayHaveArrived(err) || !(await starting(root, name, p.sock))) throw err;
      return call(QueueClient.oneShot(p.sock, { timeoutMs }));
    });
  } catch (err) {
    // Whether the request may have reached the queue stays known (socket-client's `reached`): a caller tells "not sent" from "maybe made".
    if (isRqError(err, 'RQ_ERR_NO_REPLY'))
      throw Object.assign(RqError.of('RQ_ERR_NO_REPLY', `queue ${name}: its process does not answer (${err.message})`), {
        reached: (err as { reached?: boolean }).reached,
      });
    throw err;
  }
  if (!Array.isArray(a.raw) || a.raw.length === 0) throw RqError.of('RQ_ERR_PROTOCOL', `queue ${name}: unexpected reply: ${shown(a.raw)}`);
  return a;
}

/** How long a command waits for a queue that is starting: a new one answers within a second. */
const START_WAIT_MS = 5000;

function inScandir(root: string, name: string): boolean {
  try {
    return fs.lstatSync(path.join(rootPaths(root).scandir, name)).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * A queue process in its first start, serving or not yet: one that began serving between the command's
 * failed connect and this look is asked again too. One restarted after dying (BACKOFF, or RUNNING
 * again for a moment) is no new queue.
 */
export function firstStart(row: Pick<WorkerInfo, 'status' | 'restarts'>): boolean {
  return row.status === 'RUNNING' && row.restarts === 0;
}

/**
 * Whether queue `name` is starting, and then whether it answers within START_WAIT_MS: rq-mgr has
 * spawned its process for the first time (serving or not yet: it may have begun between a failed connect and this look), or a link for it is in
 * scandir/ that rq-mgr has neither made a queue nor refused yet. A queue that died (BACKOFF, ERROR, or
 * restarted), a refused entry or a stopped rq-mgr is not waited for: the command fails at once, as before.
 */
async function starting(root: string, name: string, sock: string): Promise<boolean> {
  const mgr = new MgrClient(rootPaths(root).mgrSock);
  const workers = await mgr.status(1000).catch(() => null);
  if (!workers?.ok) return false;
  const row = workers.value[name];
  const coming = row ? firstStart(row) : inScandir(root, name) && (await mgr.whyNotQueue(name)) === null;
  return coming && untilQueueAnswers(() => QueueClient.oneShot(sock, { timeoutMs: 1000 }).ping(), START_WAIT_MS);
}

/**
 * The refusal for a name that is no queue of the root: why, when rq-mgr refused an entry of that name; else the classic
 * text, with the queue the name is near (`queue not found: Hello (did you mean hello?)`).
 */
export async function noQueue(root: string, name: string): Promise<RqError> {
  const why = await new MgrClient(rootPaths(root).mgrSock).whyNotQueue(name);
  if (why) return RqError.of('RQ_ERR_QUEUE_NOT_RUNNING', name, why);
  const queues = await fsp.readdir(rootPaths(root).queues).catch(() => [] as string[]);
  const near = closest(
    name,
    queues.filter((q) => !q.startsWith('.')),
  );
  return RqError.of('RQ_ERR_NO_SUCH_QUEUE', near ? `${name} (did you mean ${near}?)` : name);
}

/** `<status> <text>`: the classic tool's output line for a reply. */
export function replyLine(a: Answer<unknown>): string {
  const reply = a.raw as unknown[];
  const show = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
  return `${show(reply[0])} ${show(reply[1])}`;
}

/**
 * The failures a reply over many messages lists (`requeue --queue`, `cancel --tag`), one
 * `rq: <id>: <reason>` line each for stderr: the summary line alone would not say which failed.
 */
export function failureLines(a: Answer<unknown>): string[] {
  const r = partialOf(a.raw);
  if (!r) return [];
  const lines = r.failures.map((f) => `rq: ${f.id ?? `messages[${f.index}]`}: ${f.reason}`);
  if (r.failures_cut) lines.push(`rq: and ${r.failed - r.failures.length} more failures not listed`);
  return lines;
}
