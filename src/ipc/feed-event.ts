// The live event feed's lines, typed once: what a queue's events.sock writes, the web's /events relays and the pages read.
import { RqError, shown } from '../errors.js';
import type { State } from '../message/states.js';

/** What happened to one message: its creation, each rename, a script start, a run's end, a delete. */
export type MoveType = 'created' | 'moved' | 'started' | 'finished' | 'removed';
export const MOVE_TYPES: readonly MoveType[] = ['created', 'moved', 'started', 'finished', 'removed'];

export interface FeedEvent {
  /** 1, 2, 3… per queue process: a reader sees the order, and a gap if it lost a line. A restarted queue starts again at 1. */
  seq: number;
  /** Epoch milliseconds, the queue's clock. */
  at: number;
  queue: string;
  /**
   * `status`: the queue's status changed (pause, resume, down, up, SCRIPTERROR cleared); no message.
   * `progress`: a running message's status text changed (its script wrote a line on fd 3); paced, see queue/observers/progress-pacer.ts.
   * `bulk`: a bulk action's progress; no message.
   */
  type: MoveType | 'status' | 'progress' | 'bulk';
  msg_id?: string;
  /** moved: both; created: `to` (prep or que); removed: `from`; finished: `to`, the state it ended in. */
  from?: State;
  to?: State;
  /** Who moved it (dispatcher, script, cancel, …), as the history file says. */
  actor?: string;
  reason?: string;
  /** The message's tags when the event happened (from the queue's tag index); absent when it has none. */
  tags?: string[];
  /** started: the script's pid. */
  pid?: number;
  /** bulk: the job after a batch, or finished (`state`), with its counts. */
  bulk?: { job: string; op: string; total: number; done: number; changed: number; skipped: Record<string, number>; state: string };
  /** finished: the job status text; progress: the message's status (`run - <text>`); status: UP, PAUSE, DOWN, SCRIPTERROR or DISK FULL. */
  status?: string;
}

/** The first line on every connection: who is talking and where its numbering stands (the next event is seq + 1). */
export interface FeedHello {
  type: 'hello';
  queue: string;
  pid: number;
  seq: number;
  at: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const wholeNumber = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** One line of the feed, checked enough that a consumer can rely on `type`, `seq` and `queue`. */
export function parseFeedLine(line: string): FeedEvent | FeedHello {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw RqError.of('RQ_ERR_PROTOCOL', `event feed line is not JSON: ${shown(line)}`);
  }
  if (!isObject(v) || typeof v.queue !== 'string' || !wholeNumber(v.seq) || !wholeNumber(v.at)) {
    throw RqError.of('RQ_ERR_PROTOCOL', `event feed line lacks queue, seq or at: ${shown(line)}`);
  }
  if (v.type === 'hello') {
    if (!wholeNumber(v.pid)) throw RqError.of('RQ_ERR_PROTOCOL', `event feed hello lacks a pid: ${shown(line)}`);
    return v as unknown as FeedHello;
  }
  if (v.type === 'status' || v.type === 'progress' || v.type === 'bulk' || (MOVE_TYPES as readonly unknown[]).includes(v.type)) {
    if (v.type !== 'status' && v.type !== 'bulk' && typeof v.msg_id !== 'string')
      throw RqError.of('RQ_ERR_PROTOCOL', `event feed ${String(v.type)} lacks msg_id: ${shown(line)}`);
    return v as unknown as FeedEvent;
  }
  throw RqError.of('RQ_ERR_PROTOCOL', `event feed line of unknown type: ${shown(line)}`);
}
