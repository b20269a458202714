// The timers socket's commands (spec §8, rq2): `[command, payload]` in, `["ok", result]` or `["error", text]` out; never throws.
import { shown } from '../errors.js';
import type { TimerStats, TimerTable } from './timer-table.js';

export interface TimersView {
  table: Pick<TimerTable, 'list'>;
  stats: TimerStats;
}

type Handler = (view: TimersView, payload: unknown) => unknown;

const COMMANDS: Record<string, Handler> = {
  get_timers: (v) => v.table.list(),
  get_status: (v) => ({ sent: v.stats.sent, errors: v.stats.errors, invalid: v.stats.invalid }),
};

/** Answers one rq2 request; the classic daemon crashed on anything unknown (spec §16.3), we reply with an error. */
export function handleTimersRequest(view: TimersView, payload: string): string {
  let request: unknown;
  try {
    request = JSON.parse(payload);
  } catch {
    return JSON.stringify(['error', `invalid request: expected a JSON array [command, payload], received ${shown(payload)}`]);
  }
  if (!Array.isArray(request) || typeof request[0] !== 'string') {
    return JSON.stringify(['error', `invalid request: expected a JSON array [command, payload], received ${shown(request)}`]);
  }
  const command = request[0];
  const handler = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!handler) return JSON.stringify(['error', `unknown command: ${command.slice(0, 80)}`]);
  return JSON.stringify(['ok', handler(view, request[1])]);
}
