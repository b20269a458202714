// The relay's two-phase delivery (spec §11.2): prep on the far host, attach with md5 check, commit; resumable by job/relay_id.
import { type Refusal, answer, isString } from '../ipc/answer.js';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { RqError, isErrno } from '../errors.js';
import { parseFullId } from '../message/message-id.js';
import type { TraceContext } from '../message/trace-context.js';
import type { ScriptLog } from '../script-kit/log.js';
import { type HttpClient, type HttpReply, HttpTransportError, bodyJson } from '../script-kit/http-client.js';
import { multipartFile } from './multipart-file.js';
import { relayCopy } from './relay-copy.js';
import { readRelayId, removeRelayId, writeRelayId } from './relay-id.js';
import { type RelayTarget, messageUrl, queueUrl } from '../message/relay-target.js';

export type RelayOutcome =
  | { kind: 'relayed'; fullId: string }
  /** Worth another attempt later (far host down, refused, mismatch): the caller resends with back-off. */
  | { kind: 'retry'; reason: string }
  /** Will not get better by waiting: the message goes to err. */
  | { kind: 'fail'; reason: string };

export interface RelayJob {
  /** The message's job/ dir (the script's cwd): relay_id lives here. */
  jobDir: string;
  target: RelayTarget;
  /** The trace context the run was given (TRACEPARENT, TRACESTATE): the far copy's. */
  trace?: TraceContext;
  /** The far copy's dest when not the message's own (a pool's: the chosen queue's URL). */
  dest?: string;
  /** Runs before every commit is sent (a pool binds the message to its host here). */
  beforeCommit?: () => Promise<void>;
  /**
   * Why the host is only asked whether a far copy landed, never sent the message, its files or a
   * commit (a pool host no longer up in the fleet, whose address may be another machine's now).
   */
  askOnly?: string;
}

export interface RelayDeps {
  http: HttpClient;
  /** A `run` line: the message's status while relaying. */
  progress: (text: string) => void;
  log: ScriptLog;
  now?: () => number;
}

/** States in which the far copy has been committed: it exists outside prep. */
const COMMITTED = new Set(['que', 'run', 'done', 'relayed', 'err']);

type FarState = { kind: 'prep' } | { kind: 'committed'; state: string } | { kind: 'missing' } | { kind: 'unknown'; reason: string };

interface FarCopy {
  fullId: string;
  queue: string;
  id: string;
}

/** The far web passes the queue's reply through: read it as the queue client reads its own. */
const farAnswer = (body: string) => answer(bodyJson(body), isString);

/**
 * The far host is an HTTP peer that may be the classic daemon, whose refusals carry no code: the one
 * refusal the relay acts on is the one spec §11.2 names word for word, `["fail", "cannot find message"]`,
 * so it is told by that whole text (never by a pattern); a code, when the far side sends one, is taken first.
 */
const NOT_FOUND = RqError.of('RQ_ERR_CANNOT_FIND_MESSAGE');
const farNotFound = (r: Refusal): boolean => r.code === NOT_FOUND.code || (r.code === 'RQ_ERR_REFUSED' && r.text === NOT_FOUND.message);

function httpProblem(step: string, reply: HttpReply): string {
  const text = reply.body
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return `${step}: HTTP ${reply.status}${text ? ` ${text.slice(0, 120)}` : ''}`;
}

function transportProblem(step: string, err: unknown): string {
  return `${step}: ${err instanceof HttpTransportError ? err.message : (err as Error).message}`;
}

function farCopy(fullId: string): FarCopy | null {
  const parts = parseFullId(fullId);
  return parts ? { fullId, ...parts } : null;
}

/** Non-dot regular files of attach/, by name. */
async function attachments(msgDir: string): Promise<string[]> {
  try {
    const entries = await fsp.readdir(path.join(msgDir, 'attach'), { withFileTypes: true });
    return entries
      .filter((e) => e.isFile() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return [];
    throw err;
  }
}

export async function relayMessage(job: RelayJob, deps: RelayDeps): Promise<RelayOutcome> {
  const { http, log } = deps;
  const now = deps.now ?? Date.now;
  const { base } = job.target;
  const msgDir = path.dirname(job.jobDir);

  /** GET state.json of the far copy: tells a committed copy from one still in prep or gone. */
  async function farState(copy: FarCopy): Promise<FarState> {
    let reply: HttpReply;
    try {
      reply = await http.get(`${messageUrl(base, copy.queue, copy.id)}/state.json`);
    } catch (err) {
      return { kind: 'unknown', reason: transportProblem('state check', err) };
    }
    if (reply.status === 404) return queueAnswers(copy.queue);
    if (reply.status !== 200) return { kind: 'unknown', reason: httpProblem('state check', reply) };
    const r = bodyJson(reply.body);
    const state = Array.isArray(r) && typeof r[0] === 'string' ? r[0] : null;
    if (state === 'prep') return { kind: 'prep' };
    if (state !== null && COMMITTED.has(state)) return { kind: 'committed', state };
    return { kind: 'unknown', reason: `state check: unexpected reply ${reply.body.slice(0, 120)}` };
  }

  /**
   * A 404 for the message also comes from a queue that is DOWN (it answers no message requests):
   * the message counts as gone only when its queue answers (UP, PAUSE, SCRIPTERROR) or no longer exists.
   */
  async function queueAnswers(queue: string): Promise<FarState> {
    let reply: HttpReply;
    try {
      reply = await http.get(`${queueUrl(base, queue)}.json`);
    } catch (err) {
      return { kind: 'unknown', reason: transportProblem('queue status check', err) };
    }
    if (reply.status === 404) return { kind: 'missing' };
    const status = reply.status === 200 ? (bodyJson(reply.body) as { status?: unknown } | undefined)?.status : undefined;
    if (typeof status === 'string' && status !== 'DOWN') return { kind: 'missing' };
    return { kind: 'unknown', reason: `state check: far queue ${queue} is ${typeof status === 'string' ? status : `not answering (HTTP ${reply.status})`}` };
  }

  /**
   * The far side says "cannot find message" (it is not in prep): committed by an attempt whose
   * reply was lost, or gone. Only a copy that is really gone is given up for a fresh one.
   */
  async function settleNotFound(copy: FarCopy, step: string): Promise<RelayOutcome> {
    const s = await farState(copy);
    if (s.kind === 'committed') {
      log(`${step} answered cannot find message, but ${copy.fullId} is already ${s.state}: committed by an earlier attempt`);
      return { kind: 'relayed', fullId: copy.fullId };
    }
    if (s.kind === 'missing') {
      await removeRelayId(job.jobDir);
      return { kind: 'retry', reason: `${step}: far copy ${copy.fullId} is gone; a new one will be made` };
    }
    return { kind: 'retry', reason: s.kind === 'prep' ? `${step}: cannot find message, yet ${copy.fullId} is in prep` : s.reason };
  }

  // 1. Resume a far copy from an earlier attempt, or allocate one.
  let copy: FarCopy | null = null;
  const stored = await readRelayId(job.jobDir);
  if (stored !== null) {
    copy = farCopy(stored);
    if (!copy) {
      log(`job/relay_id holds ${JSON.stringify(stored)}, which is not a full message id: discarded`);
      await removeRelayId(job.jobDir);
    } else {
      const s = await farState(copy);
      if (s.kind === 'committed') {
        log(`far copy ${copy.fullId} is already ${s.state}: an earlier attempt committed it`);
        return { kind: 'relayed', fullId: copy.fullId };
      }
      if (s.kind === 'unknown') return { kind: 'retry', reason: s.reason };
      if (s.kind === 'missing') {
        log(`far copy ${copy.fullId} is gone: making a new one`);
        await removeRelayId(job.jobDir);
        copy = null;
      } else {
        log(`resuming far copy ${copy.fullId} (still in prep)`);
      }
    }
  }

  if (job.askOnly !== undefined)
    return { kind: 'retry', reason: `${job.askOnly}: ${copy ? `far copy ${copy.fullId} is in prep there, ` : ''}nothing is sent to it` };

  if (!copy) {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(await fsp.readFile(path.join(msgDir, 'msg'), 'utf8')) as Record<string, unknown>;
    } catch (err) {
      return { kind: 'fail', reason: `cannot read the message file ${path.join(msgDir, 'msg')}: ${(err as Error).message}` };
    }
    const url = `${queueUrl(base, job.target.queue)}/new_message`;
    // The classic relay's line before it asks the far host for a copy (drudru: the queue URL).
    log(`attempting remote ${queueUrl(base, job.target.queue)}`);
    deps.progress(`prep ${url}`);
    let reply: HttpReply;
    try {
      const fields = job.dest === undefined ? msg : { ...msg, dest: job.dest };
      reply = await http.postForm(url, { x_format: 'json', mesg: JSON.stringify(relayCopy(fields, job.trace)) });
    } catch (err) {
      return { kind: 'retry', reason: transportProblem('prep', err) };
    }
    if (reply.status !== 200) return { kind: 'retry', reason: httpProblem('prep', reply) };
    const r = farAnswer(reply.body);
    if (!r.ok) return { kind: 'retry', reason: `prep: ${reply.body.slice(0, 160)}` };
    copy = farCopy(r.value);
    if (!copy) return { kind: 'retry', reason: `prep: the far host answered ${JSON.stringify(r.value)}, not a full message id` };
    // Stored before anything else is sent: a retry after a crash or a lost reply re-uses this copy.
    await writeRelayId(job.jobDir, copy.fullId);
    log(`prep ok: far copy ${copy.fullId}`);
  }

  // 2. Attachments, md5-checked: the far side answers with the md5 of what it stored.
  for (const name of await attachments(msgDir)) {
    const file = path.join(msgDir, 'attach', name);
    const body = await multipartFile({ x_format: 'json', pathname: name, msg_id: copy.id }, 'filedata', file, name);
    const size = body.length;
    deps.progress(`attach ${name} (${size} bytes) to ${copy.fullId}`);
    const t0 = now();
    let reply: HttpReply;
    try {
      reply = await http.request(`${messageUrl(base, copy.queue, copy.id)}/attach/new`, {
        method: 'POST',
        headers: { 'content-type': body.contentType, accept: 'application/json' },
        body,
      });
    } catch (err) {
      return { kind: 'retry', reason: transportProblem(`attach ${name}`, err) };
    }
    if (reply.status === 413) return { kind: 'fail', reason: httpProblem(`attach ${name}`, reply) };
    if (reply.status !== 200) return { kind: 'retry', reason: httpProblem(`attach ${name}`, reply) };
    if (bodyJson(reply.body) === undefined) return { kind: 'fail', reason: `BAD JSON from attach ${name}: ${reply.body.slice(0, 120)}` };
    const r = farAnswer(reply.body);
    if (!r.ok && farNotFound(r)) return settleNotFound(copy, `attach ${name}`);
    if (!r.ok) return { kind: 'retry', reason: `attach ${name}: ${JSON.stringify(r.raw).slice(0, 160)}` };
    const want = `${body.md5()}-Attached successfully`;
    if (r.value !== want) return { kind: 'retry', reason: `attach ${name}: md5 mismatch (sent ${body.md5()}, far side answered ${JSON.stringify(r.value)})` };
    const ms = Math.max(1, now() - t0);
    log(`attached ${name}: ${size} bytes in ${ms} ms (${(size / 1048576 / (ms / 1000)).toFixed(1)} MB/s), md5 ${body.md5()}`);
  }

  // 3. Commit.
  await job.beforeCommit?.();
  deps.progress(`commit ${copy.fullId}`);
  let reply: HttpReply;
  try {
    reply = await http.postForm(messageUrl(base, copy.queue, copy.id), { x_format: 'json', _method: 'commit', msg_id: copy.id });
  } catch (err) {
    return { kind: 'retry', reason: transportProblem('commit', err) };
  }
  if (reply.status !== 200) return { kind: 'retry', reason: httpProblem('commit', reply) };
  const r = farAnswer(reply.body);
  if (r.ok) {
    log(`commit ok: ${copy.fullId}`);
    return { kind: 'relayed', fullId: copy.fullId };
  }
  if (farNotFound(r)) return settleNotFound(copy, 'commit');
  return { kind: 'retry', reason: `commit: ${reply.body.slice(0, 160)}` };
}
