// The timers socket's commands (spec §8, rq2): `[command, payload]` in, `["ok", result]` or `["error", text]` out (with its code to a client that asked); never throws.
import { RqError, shown } from '../errors.js';
import { CODES_COMMAND, type Connection, refusalOf } from '../ipc/reply-codes.js';
import type { TimerDir } from './timer-dir.js';
import type { TimerStats, TimerTable } from './timer-table.js';

export interface TimersView {
  table: Pick<TimerTable, 'list' | 'undelivered'>;
  stats: TimerStats;
  dir: Pick<TimerDir, 'refusals'>;
}

type Handler = (view: TimersView, payload: unknown) => unknown;

const COMMANDS: Record<string, Handler> = {
  get_timers: (v) => v.table.list(),
  get_status: (v) => ({ sent: v.stats.sent, errors: v.stats.errors, invalid: v.stats.invalid }),
  get_refused: (v) => v.dir.refusals(),
  get_undelivered: (v) => v.table.undelivered(),
};

/**
 * Answers one rq2 request on `conn`; the classic daemon crashed on anything unknown (spec §16.3), we
 * reply with an error. `["reply_codes", …]` asks for each refusal's catalogue code on this connection.
 */
export function handleTimersRequest(view: TimersView, payload: string, conn: Connection = { codes: false }): string {
  const refuse = (err: RqError) => JSON.stringify(refusalOf(conn, err, 'error'));
  let request: unknown;
  try {
    request = JSON.parse(payload);
  } catch {
    return refuse(RqError.of('RQ_ERR_INVALID_REQUEST', 'a JSON array [command, payload]', shown(payload)));
  }
  if (!Array.isArray(request) || typeof request[0] !== 'string') {
    return refuse(RqError.of('RQ_ERR_INVALID_REQUEST', 'a JSON array [command, payload]', shown(request)));
  }
  const command = request[0];
  if (command === CODES_COMMAND) {
    conn.codes = true;
    return JSON.stringify(['ok', 'codes']);
  }
  const handler = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!handler) return refuse(RqError.of('RQ_ERR_UNKNOWN_COMMAND', command.slice(0, 80)));
  return JSON.stringify(['ok', handler(view, request[1])]);
}
