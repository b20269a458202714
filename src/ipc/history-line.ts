// A message's history line as the queue's get_history returns it (rq-beyond §B14); history-words.ts says it in words.
import type { State } from '../message/states.js';

/** A move (`from`, `to`) or an event, with its details. */
export interface HistoryLine {
  at: string;
  from?: State | null;
  to?: State;
  event?: string;
  actor?: string;
  reason?: string;
  [detail: string]: unknown;
}
