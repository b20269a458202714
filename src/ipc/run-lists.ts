// What the queue's `running` (rq-beyond §B11) and `waiting` (§B2) commands answer, one entry per message.

import type { MessageWaiting } from '../message/message.js';

export interface RunningEntry {
  msg_id: string;
  pid: number;
  started_at: string;
  /** The last sign of life: a line on fd 3, or output growth when `heartbeat_output` is on; the start when none. */
  last_beat: string;
  silent_s: number;
  /** The earlier of the timeout and the heartbeat deadline; null when the run has neither. */
  deadline: string | null;
  /** Seconds of silence allowed, or null: a UI calls a run stalling past half of it (§B11). */
  heartbeat_timeout: number | null;
  attempt: number;
  /** The limit key whose slot the run holds (rq-beyond §B12). */
  limit?: string;
}

/** Why a que message is not running (rq-beyond §B2). */
export const WAIT_REASONS = ['delayed', 'coalesced', 'dependencies', 'limit'] as const;
export type WaitReason = (typeof WAIT_REASONS)[number];

export type WaitingEntry = { msg_id: string } & Exclude<MessageWaiting, { reason: 'ready' }>;
