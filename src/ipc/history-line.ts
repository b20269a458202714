// A message's history line as the queue's get_history returns it (rq-beyond §B14), and its details as people read them.
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

const MAIN_KEYS = new Set(['at', 'from', 'to', 'event', 'actor', 'reason']);

/** The line's other keys as `key value` phrases: `retry 2`, `delay_s 4`, `exit {"code":0}`. */
export function historyDetails(line: HistoryLine): string[] {
  return Object.entries(line)
    .filter(([k]) => !MAIN_KEYS.has(k))
    .map(([k, v]) => `${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`);
}
