// The one typed client of a queue socket (spec §7): a method per command, each returning a typed answer.
import type { MessageView } from '../message/message.js';
import { type State, type StateCounts, STATES } from '../message/states.js';
import { type Answer, answer, isArray, isNumber, isObject, isString } from './answer.js';
import type { HistoryLine } from './history-line.js';
import type { BulkJob } from './bulk-reply.js';
import type { RunningEntry, WaitingEntry } from './run-lists.js';
import type { DayStats, FailureGroupPage, FailureGroups, QueueMetrics, SearchPage } from './stats-reply.js';
import type { TaggedPage } from './tag-lists.js';
import { queueCommand } from './rq1.js';
import { CODES_HELLO } from './reply-codes.js';
import type { RequestOptions } from './socket-client.js';

/** Sends one command and returns the parsed JSON reply; rejects (RQ_ERR_NO_REPLY) when nobody answers. */
export type QueueTransport = (command: string, arg: unknown) => Promise<unknown>;

export interface MessageStatus {
  path: string;
  status: string;
  state: State;
}

/** A queue's status and, when it cannot run scripts (SCRIPTERROR, DISK FULL), why. */
export interface StatusDetail {
  status: string;
  reason?: string;
}

const isStatusDetail = (v: unknown): v is StatusDetail => isObject(v) && isString(v.status) && (v.reason === undefined || isString(v.reason));
const isState = (v: unknown): v is State => isString(v);
const isCounts = (v: unknown): v is StateCounts => isObject(v) && STATES.every((k) => isNumber(v[k]));
const isView = (v: unknown): v is MessageView => isObject(v) && isString(v.msg_id);
export type { HistoryLine } from './history-line.js';
const isHistory = (v: unknown): v is HistoryLine[] => isArray(v) && v.every((l) => isObject(l) && isString(l.at));
const isEntries = <T>(v: unknown): v is T[] => isArray(v) && v.every((e) => isObject(e) && isString(e.msg_id));
const isTags = (v: unknown): v is string[] => isArray(v) && v.every(isString);
const isPage = (v: unknown): v is TaggedPage => isObject(v) && isNumber(v.total) && isEntries(v.messages);
const isTagCounts = (v: unknown): v is Record<string, number> => isObject(v) && Object.values(v).every(isNumber);
const isDay = (v: unknown): v is DayStats => isObject(v) && isString(v.date) && isObject(v.wait) && isObject(v.run);
const isMetrics = (v: unknown): v is QueueMetrics => isObject(v) && isString(v.status) && isObject(v.totals) && isObject(v.live);
const isStatus = (v: unknown): v is MessageStatus => isObject(v) && isString(v.status) && isString(v.state);

/** The `search` command's arguments; the queue checks each one and names what it refuses. */
export interface SearchArgs {
  query?: unknown;
  text?: unknown;
  exact?: unknown;
  state?: unknown;
  acked?: boolean;
  created_from?: number;
  created_to?: number;
  sort?: string;
  order?: string;
  offset?: unknown;
  limit?: unknown;
  detail?: boolean;
  /** Wait at most this long for the queue's first read of its messages, then answer `building`. */
  wait_ms?: number;
}

/** Messages one create_messages may carry: the queue refuses more, and its clients split or refuse before sending. */
export const MAX_CREATE_BATCH = 10_000;

export class QueueClient {
  constructor(private readonly send: QueueTransport) {}

  /** A client that opens one connection per command (CLI, timers, scripts, dup). */
  static oneShot(sockPath: string, opts?: RequestOptions): QueueClient {
    // Refusals come with their catalogue codes (reply-codes.ts): nothing here reads a code out of a text.
    return new QueueClient((command, arg) => queueCommand(sockPath, command, arg, { ...opts, hello: CODES_HELLO }));
  }

  async ping(): Promise<boolean> {
    const r = await this.send('ping', {});
    return Array.isArray(r) && r[0] === 'pong';
  }

  async uptime(): Promise<Answer<number>> {
    return answer(await this.send('uptime', {}), isNumber, true);
  }

  /** UP, PAUSE, DOWN, SCRIPTERROR or DISK FULL. */
  async status(): Promise<Answer<string>> {
    return answer(await this.send('status', {}), isString, true);
  }

  /** The status and, in SCRIPTERROR or DISK FULL, why (an rq extension: an older queue refuses it). */
  async statusDetail(): Promise<Answer<StatusDetail>> {
    return answer(await this.send('status_detail', {}), isStatusDetail);
  }

  async config(): Promise<Answer<Record<string, unknown>>> {
    return answer(await this.send('config', {}), isObject);
  }

  /** Creates a committed message (or, with `prep`, one left in prep/); the value is its full id. */
  async create(fields: object, mode: 'create_message' | 'prep_message' | 'single_que' = 'create_message'): Promise<Answer<string>> {
    return answer(await this.send(mode, fields), isString);
  }

  /**
   * Creates a batch of committed messages under one group commit (create_messages); the value has one
   * answer per message, in order. One bad message refuses the whole batch, naming its index.
   */
  async createMany(messages: object[]): Promise<Answer<Answer<string>[]>> {
    const a = answer(await this.send('create_messages', { messages }), isArray);
    return a.ok ? { ...a, value: a.value.map((one) => answer(one, isString)) } : a;
  }

  /** The value is `<md5>-Attached successfully`. */
  async attach(msgId: string, pathname: string, name?: string): Promise<Answer<string>> {
    // JSON leaves out an undefined name, as the classic client sends it.
    return answer(await this.send('attach_message', { msg_id: msgId, pathname, name }), isString);
  }

  async deleteAttachment(msgId: string, name: string): Promise<Answer<string>> {
    return answer(await this.send('delete_attach_message', { msg_id: msgId, attachment_name: name }), isString);
  }

  async commit(msgId: string): Promise<Answer<string>> {
    return answer(await this.send('commit_message', { msg_id: msgId }), isString);
  }

  async get(msgId: string): Promise<Answer<MessageView>> {
    return answer(await this.send('get_message', { msg_id: msgId }), isView);
  }

  /** From rq-mgr (docs/fleet.md, Pools): a host now takes `queue`; the relay's messages for `fleet:<queue>` waiting out a back-off are due now. How many. */
  async wakePool(queue: string): Promise<Answer<number>> {
    return answer(await this.send('wake_pool', { queue }), isNumber);
  }

  async state(msgId: string): Promise<Answer<State>> {
    return answer(await this.send('get_message_state', { msg_id: msgId }), isState);
  }

  async messageStatus(msgId: string): Promise<Answer<MessageStatus>> {
    return answer(await this.send('get_message_status', { msg_id: msgId }), isStatus);
  }

  /** delete_message, destroy_message, run_message or clone_message; the value is the classic text (clone: the new full id). */
  async act(command: 'delete_message' | 'destroy_message' | 'run_message' | 'clone_message', msgId: string): Promise<Answer<string>> {
    return answer(await this.send(command, { msg_id: msgId }), isString);
  }

  async counts(): Promise<Answer<StateCounts>> {
    const r = await this.send('num_messages', {});
    return isCounts(r) ? { ok: true, value: r, raw: r } : answer(r, isCounts);
  }

  /** Ids (que: [id, due], run: [id, status]) in a state, as the `messages` command lists them. */
  async list(state: string, extra: { limit?: number; filter?: string } = {}): Promise<Answer<unknown[]>> {
    const r = await this.send('messages', { state, ...extra });
    return isArray(r) && r[0] !== 'fail' ? { ok: true, value: r, raw: r } : answer(r, isArray);
  }

  /** rq-beyond §B5: `msg cancelled` (prep, que) or `msg cancelling` (run: TERM sent, its end finishes it). */
  async cancel(msgId: string, opts: { reason?: string; actor?: string; purge?: unknown } = {}): Promise<Answer<string>> {
    return answer(await this.send('cancel_message', { msg_id: msgId, ...opts }), isString);
  }

  /** rq-beyond §B6: err → que under the same id; `due` (epoch s) or `delay` (s), else now; values as numbers or their text (the queue checks them). */
  async requeue(msgId: string, opts: { reset?: unknown; due?: unknown; delay?: unknown; actor?: string } = {}): Promise<Answer<string>> {
    return answer(await this.send('requeue_message', { msg_id: msgId, ...opts }), isString);
  }

  /** rq-beyond §B6: a new due for a prep or que message, `due` (epoch s) or `delay` (s); the value is the new due. */
  async reschedule(msgId: string, opts: { due?: unknown; delay?: unknown; actor?: string }): Promise<Answer<number>> {
    return answer(await this.send('reschedule_message', { msg_id: msgId, ...opts }), isNumber);
  }

  /** rq-beyond §B7: the new priority of a prep or que message. */
  async setPriority(msgId: string, priority: unknown, actor?: string): Promise<Answer<number>> {
    return answer(await this.send('set_priority', { msg_id: msgId, priority, actor }), isNumber);
  }

  /** rq-beyond §B14: every history line, oldest first, the create entry implied by the id. */
  async history(msgId: string): Promise<Answer<HistoryLine[]>> {
    return answer(await this.send('get_history', { msg_id: msgId }), isHistory);
  }

  /** Answers once the message has finished (or `timed out` after `timeoutS`), with its status and state as get_message_status gives them (`deleted` when it was removed). */
  async waitFinished(msgId: string, timeoutS: number): Promise<Answer<{ status: string; state: State | 'deleted' }>> {
    return answer(
      await this.send('wait_message', { msg_id: msgId, timeout: timeoutS }),
      (v): v is { status: string; state: State | 'deleted' } => isObject(v) && isString(v.status) && isString(v.state),
    );
  }

  /** rq-beyond §B6: every unacknowledged err message with `outcome` (all when absent) back to the que, oldest first; the count. */
  async requeueErrs(opts: { outcome?: unknown; group?: unknown; limit?: unknown; actor?: string } = {}): Promise<Answer<number>> {
    return answer(await this.send('requeue_errs', opts), isNumber);
  }

  /** rq-beyond §B15.3: one UTC day's statistics (`YYYYMMDD`, today when absent; today's carry `live`). */
  async stats(date?: string): Promise<Answer<DayStats>> {
    return answer(await this.send('stats', date === undefined ? {} : { date }), isDay);
  }

  /** rq-beyond §B16: this queue's part of `GET /metrics`. */
  async metrics(): Promise<Answer<QueueMetrics>> {
    return answer(await this.send('metrics', {}), isMetrics);
  }

  /** rq-beyond §B15.4: err messages per failure group, or one group's messages when `group` is given. */
  async failed(query: { group?: unknown; offset?: unknown; limit?: unknown } = {}): Promise<Answer<FailureGroups | FailureGroupPage>> {
    return answer(await this.send('failed', query), (v): v is FailureGroups | FailureGroupPage => isObject(v) && (isObject(v.groups) || isNumber(v.total)));
  }

  /**
   * Messages of every state whose fields contain (or, with `exact`, equal) the texts of `query`, filtered and sorted as
   * asked (newest first by default); `detail` adds each row's status and times, `wait_ms` bounds the wait (then `building`)
   * while the queue's index is still being read.
   */
  async search(q: SearchArgs): Promise<Answer<SearchPage>> {
    return answer(await this.send('search', q), (v): v is SearchPage => isObject(v) && isNumber(v.total) && isEntries(v.messages));
  }

  /** A bulk action (`retry`, `delete`, `ack`, `move` with `dest`) on `ids` or every eligible match of `filter`; `dry_run` answers how many would change. */
  async bulk(args: {
    op: string;
    ids?: string[];
    filter?: SearchArgs;
    dest?: string;
    dry_run?: boolean;
  }): Promise<Answer<BulkJob | { op: string; count: number }>> {
    return answer(await this.send('bulk', args), (v): v is BulkJob | { op: string; count: number } => isObject(v) && isString(v.op));
  }

  /** A bulk job, once it has handled more than `seen` messages or finished (at most `waitMs`); without `job`, the jobs remembered. */
  async bulkStatus(job?: string, seen?: number, waitMs?: number): Promise<Answer<BulkJob | BulkJob[]>> {
    const args = job === undefined ? {} : { job, ...(seen === undefined ? {} : { seen }), ...(waitMs ? { wait_ms: waitMs } : {}) };
    return answer(await this.send('bulk_status', args), (v): v is BulkJob | BulkJob[] => Array.isArray(v) || (isObject(v) && isString(v.job)));
  }

  /** rq-beyond §B11: the running messages with their pid, clocks and attempt. */
  async running(): Promise<Answer<RunningEntry[]>> {
    return answer(await this.send('running', {}), isEntries<RunningEntry>);
  }

  /** rq-beyond §B2: queued messages that are not ready, with why. */
  async waiting(opts: { reason?: unknown; limit?: unknown } = {}): Promise<Answer<WaitingEntry[]>> {
    return answer(await this.send('waiting', opts), isEntries<WaitingEntry>);
  }

  async ackErrs(): Promise<Answer<number>> {
    return answer(await this.send('ack_errs', {}), isNumber);
  }

  /** rq-beyond §B9.1: adds and removes tags (arrays or comma-separated); the value is the new list. */
  async tagMessage(msgId: string, change: { add?: unknown; remove?: unknown; actor?: string }): Promise<Answer<string[]>> {
    return answer(await this.send('tag_message', { msg_id: msgId, ...change }), isTags);
  }

  /** rq-beyond §B9.2: a page of this queue's messages with `tag`, most recently tagged first. */
  async tagged(query: { tag: string; state?: unknown; offset?: unknown; limit?: unknown }): Promise<Answer<TaggedPage>> {
    return answer(await this.send('tagged', query), isPage);
  }

  /** How many of this queue's messages carry each tag. */
  async tags(): Promise<Answer<Record<string, number>>> {
    return answer(await this.send('tags', {}), isTagCounts);
  }

  /** Cancels every prep, que and running message with `tag`; the value is how many. */
  async cancelTagged(tag: string, opts: { reason?: string; actor?: string } = {}): Promise<Answer<number>> {
    return answer(await this.send('cancel_tagged', { tag, ...opts }), isNumber);
  }

  /** Rebuilds the tag index from every message; the value is the (tag, message) pairs found. */
  async reindexTags(): Promise<Answer<number>> {
    return answer(await this.send('reindex_tags', {}), isNumber);
  }

  /** From rq-mgr (rq-beyond §B12.3): a waiting message holds a slot of `key` now. */
  async limitGranted(msgId: string, key: string): Promise<Answer<unknown>> {
    return answer(await this.send('limit_granted', { msg_id: msgId, key }), (v): v is unknown => v === undefined);
  }

  /** From rq-mgr's sweep: ids of the running and granted messages holding slots. */
  async limitHeld(): Promise<Answer<string[]>> {
    return answer(await this.send('limit_held', {}), isTags);
  }

  /** Internal (rq-beyond §B8.3): registers `dependent` (`<queue>/<id>`, or a fleet host's full id) on message `msgId`; the value is where that message is. */
  async addDependent(msgId: string, dependent: string): Promise<Answer<{ state: State; outcome?: string }>> {
    const isState = (v: unknown): v is { state: State; outcome?: string } => isObject(v) && isString(v.state);
    return answer(await this.send('add_dependent', { msg_id: msgId, dependent }), isState);
  }

  /** Internal (rq-beyond §B8.3): a dependency of `msg_id` has finished; `resolved` or `ignored`. */
  async dependencyResolved(payload: { msg_id: string; dependency: string; state: string; outcome?: string }): Promise<Answer<'resolved' | 'ignored'>> {
    return answer(await this.send('dependency_resolved', payload), (v): v is 'resolved' | 'ignored' => v === 'resolved' || v === 'ignored');
  }

  /** rq-beyond §B8.3: stops waiting for some dependencies (`depends`) or all (`all`); the value is the refs still awaited. */
  async undepend(msgId: string, which: { depends?: unknown; all?: unknown; actor?: string }): Promise<Answer<string[]>> {
    return answer(await this.send('undepend', { msg_id: msgId, ...which }), isTags);
  }
}
