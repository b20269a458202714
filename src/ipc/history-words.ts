// What a line of a message's history says in words (the message page's Timeline, `rq history`): its step, its reason and its details, never raw JSON.
import type { HistoryLine } from './history-line.js';

/** `0.4s`, `12s`, `3m 05s`, `2h 01m`: the wait or run time a step took. */
export function stepDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 10_000) return `${(ms / 1000).toFixed(ms < 1000 ? 3 : 1)}s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Every event a queue writes into a history (rq-beyond §B14), as people say it; another reads as its name with spaces. */
export const EVENT_WORDS: Readonly<Record<string, string>> = {
  timeout: 'timed out',
  stall: 'stalled',
  cancel_requested: 'cancel requested',
  cancel_too_late: 'cancel came too late',
  priority: 'priority changed',
  reschedule: 'rescheduled',
  tags: 'tags changed',
  limit_wait: 'waiting for a limit slot',
  limit_grant: 'limit slot granted',
  depends_resolved: 'dependency finished',
  undepend: 'dependencies lifted',
};

/** The step: `created → que` for the create, `run → done` for a move, `stays in run` for a stop that left it there, the event in words. */
export function stepWords(l: HistoryLine): string {
  if (l.event !== undefined) return EVENT_WORDS[l.event] ?? l.event.replace(/_/g, ' ');
  if (l.to === undefined) return l.from ? `left ${l.from}` : 'unknown step';
  if (l.from === null || l.from === undefined) return `created → ${l.to}`;
  if (l.from === l.to) return `stays in ${l.to}`;
  return `${l.from} → ${l.to}`;
}

interface ExitDetail {
  code?: number | null;
  signal?: string | null;
  wall_ms?: number;
}

/** How a run ended: `exit 3`, `killed by SIGKILL`, with how long it ran. */
export function exitWords(exit: ExitDetail): string {
  const how = exit.signal ? `killed by ${exit.signal}` : typeof exit.code === 'number' ? `exit ${exit.code}` : 'no exit status';
  return typeof exit.wall_ms === 'number' ? `${how} after ${stepDuration(exit.wall_ms)}` : how;
}

/** Bytes as a person reads them: `512K`, `54.5M`, `1.2G`. */
function bytesWords(n: number): string {
  const units = ['K', 'M', 'G', 'T'];
  let v = n;
  let unit = '';
  for (const u of units) {
    if (v < 1024) break;
    v /= 1024;
    unit = u;
  }
  return `${unit && v < 100 ? Number(v.toFixed(1)) : Math.round(v)}${unit || ' bytes'}`;
}

/** What a run used: `used 1.234s CPU (user 1.2s, system 0.034s), peak memory 54.5M, 3 processes at most`. */
export function usageWords(v: unknown): string {
  if (v === null || typeof v !== 'object') return `used ${valueWords(v)}`;
  const u = v as Record<string, unknown>;
  const num = (k: string) => (typeof u[k] === 'number' ? (u[k] as number) : undefined);
  const parts: string[] = [];
  const user = num('cpu_user_ms');
  const system = num('cpu_system_ms');
  if (user !== undefined && system !== undefined)
    parts.push(`used ${stepDuration(user + system)} CPU (user ${stepDuration(user)}, system ${stepDuration(system)})`);
  const peak = num('memory_peak_bytes');
  if (peak !== undefined) parts.push(`peak memory ${bytesWords(peak)}`);
  const pids = num('pids_peak');
  if (pids !== undefined) parts.push(`${pids} process${pids === 1 ? '' : 'es'} at most`);
  const refused = num('pids_refused');
  if (refused) parts.push(`${refused} fork${refused === 1 ? '' : 's'} refused at pids_max`);
  const read = num('io_read_bytes');
  const written = num('io_write_bytes');
  if (read !== undefined && written !== undefined && read + written > 0) parts.push(`IO read ${bytesWords(read)}, written ${bytesWords(written)}`);
  const throttled = num('throttled_ms');
  if (throttled) parts.push(`throttled ${stepDuration(throttled)} at cpu_max`);
  const holds = num('memory_high_holds');
  const heldMs = num('memory_high_held_ms');
  // cgroup v2's kernel throttles by itself and counts the times, not the time.
  if (holds) parts.push(`${heldMs === undefined ? 'throttled' : `held ${stepDuration(heldMs)}`} at memory_high (${holds} time${holds === 1 ? '' : 's'})`);
  const ooms = num('oom_kills');
  if (ooms) parts.push(`${ooms} process${ooms === 1 ? '' : 'es'} ended by the OOM killer`);
  return parts.join(', ');
}

/** Seconds since the epoch (a message's due) as a UTC time, to the second. */
function dueWords(due: unknown): string {
  const ms = typeof due === 'number' ? due * 1000 : NaN;
  return Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : String(due);
}

/** A value in words: texts, numbers and lists as they are, an object as its `key value` pairs. */
function valueWords(v: unknown): string {
  if (Array.isArray(v)) return v.map(valueWords).join(', ');
  if (v !== null && typeof v === 'object')
    return Object.entries(v)
      .map(([k, x]) => `${k} ${valueWords(x)}`)
      .join(', ');
  return String(v);
}

/** A number of seconds as the Timeline says times: `4s` when whole and under a minute, else as a step's duration. */
const seconds = (v: unknown) => (typeof v !== 'number' ? valueWords(v) : Number.isInteger(v) && v >= 0 && v < 60 ? `${v}s` : stepDuration(v * 1000));

/** Each detail key of a history line (§B14) in words; keys read together (a retry's `of`, a limit's `position`) are read by their lead. */
const DETAIL_WORDS: Readonly<Record<string, (v: unknown, l: HistoryLine) => string>> = {
  exit: (v) => (v !== null && typeof v === 'object' ? exitWords(v as ExitDetail) : `exit ${valueWords(v)}`),
  usage: usageWords,
  limits_unenforced: (v) => `limits not enforced: ${valueWords(v)}`,
  attempt: (v) => `attempt ${valueWords(v)}`,
  pid: (v) => `pid ${valueWords(v)}`,
  failure: (v) => `failure: ${valueWords(v)}`,
  retry: (v, l) => `retry ${valueWords(v)}${typeof l.of === 'number' ? ` of ${l.of}` : ''}${l.delay_s !== undefined ? ` in ${seconds(l.delay_s)}` : ''}`,
  of: () => '',
  delay_s: (v, l) => (l.retry === undefined ? `delay ${seconds(v)}` : ''),
  // A retry's due is its delay from now, said already; a reschedule's is the point.
  due: (v, l) => (l.retry === undefined ? `due ${dueWords(v)}` : ''),
  outcome: (v) => `outcome ${valueWords(v)}`,
  reset: (v) => (v === true ? 'failures reset' : `reset ${valueWords(v)}`),
  priority: (v) => `priority ${valueWords(v)}`,
  after_s: (v) => `after ${seconds(v)}`,
  silent_s: (v) => `silent for ${seconds(v)}`,
  key: (v, l) => `key ${valueWords(v)}${typeof l.position === 'number' ? `, number ${l.position} in line` : ''}`,
  position: () => '',
  add: (v) => `added ${valueWords(v)}`,
  remove: (v) => `removed ${valueWords(v)}`,
  ref: (v, l) => `${valueWords(v)}${l.state !== undefined ? ` is ${valueWords(l.state)}` : ''}`,
  state: (v, l) => (l.ref === undefined ? `state ${valueWords(v)}` : ''),
  refs: (v) => valueWords(v),
};

const MAIN_KEYS = new Set(['at', 'from', 'to', 'event', 'actor', 'reason']);

/** The line's details as phrases: `exit 3 after 1.1s`, `retry 2 of 3 in 4.000s`, `added nightly, vip`. */
export function detailWords(l: HistoryLine): string[] {
  return Object.entries(l)
    .filter(([k, v]) => !MAIN_KEYS.has(k) && v !== undefined)
    .map(([k, v]) => (DETAIL_WORDS[k] ?? ((x: unknown) => `${k.replace(/_/g, ' ')} ${valueWords(x)}`))(v, l))
    .filter(Boolean);
}

/** The reason, less the `exit N:` a finished run's line starts it with when its exit detail says so in words. */
export function reasonWords(l: HistoryLine): string {
  const reason = l.reason ?? '';
  if (l.exit === undefined) return reason;
  const m = /^exit \S+?(?:: (.*))?$/s.exec(reason);
  return m ? (m[1] ?? '') : reason;
}
