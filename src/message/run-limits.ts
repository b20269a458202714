// What one run may use (memory, CPU, processes, IO weight): the fields a queue's config and a message set, checked, and the run's effective limits.
import type { Refuse } from './job-fields.js';

/** A run's limits, in the kernel's units; a field absent is not limited. */
export interface RunLimits {
  /** Bytes: the kernel kills the run's processes (OOM) past it. */
  memory_max?: number;
  /** Bytes: past it the run is held and let on a step at a time (throttled), up to memory_max. */
  memory_high?: number;
  /** Cores: 0.5 is half of one core's time. */
  cpu_max?: number;
  /** Processes and threads alive at once in the run. */
  pids_max?: number;
  /** Proportional IO weight, 1-10000 (100 is the kernel's default). */
  io_weight?: number;
}

/** The limit fields, in the order a config or a message stores them; a message's are copied with it (clone, dup, relay). */
export const RUN_LIMIT_FIELDS = ['memory_max', 'memory_high', 'cpu_max', 'pids_max', 'io_weight'] as const;
export type RunLimitField = (typeof RUN_LIMIT_FIELDS)[number];

const UNITS: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };
const MIN_MEMORY = 1024 * 1024;
/** The largest whole number of T that JavaScript counts exactly in bytes. */
const MAX_MEMORY = 8191 * 1024 ** 4;
const MAX_CORES = 1024;
const MAX_PIDS = 4_194_304;

/** Bytes from a number or a text such as `512M`, `1.5G`, `64MiB` (K, M, G, T are powers of 1024, as systemd counts); NaN when neither. */
export function parseSize(v: unknown): number {
  if (typeof v === 'number') return Number.isInteger(v) ? v : NaN;
  if (typeof v !== 'string') return NaN;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$/i.exec(v);
  // A fraction of a unit is bytes (1.5G); a fraction of a byte is no size.
  if (!m || (m[2] === '' && m[1].includes('.'))) return NaN;
  return Math.floor(Number(m[1]) * UNITS[m[2].toUpperCase()]);
}

/** Bytes as a person writes them: the largest unit that divides them (`512M`, `1536K`, `100`). */
export function formatSize(bytes: number): string {
  for (const unit of ['T', 'G', 'M', 'K']) if (bytes >= UNITS[unit] && bytes % UNITS[unit] === 0) return `${bytes / UNITS[unit]}${unit}`;
  return String(bytes);
}

function numberOf(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(v)) return Number(v);
  return NaN;
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

/** Checks and copies the limit fields of `raw`; nothing is copied when one is wrong (the first problem is thrown). */
export function readRunLimits(raw: Record<string, unknown>, refuse: Refuse): RunLimits {
  const out: RunLimits = {};
  for (const f of ['memory_max', 'memory_high'] as const) {
    if (!present(raw[f])) continue;
    const n = parseSize(raw[f]);
    if (n > MAX_MEMORY) throw refuse(f, `bytes, at most ${formatSize(MAX_MEMORY)}`, raw[f]);
    if (!(n >= MIN_MEMORY)) throw refuse(f, 'bytes, at least 1M: a whole number or a size such as "512M" or "2G"', raw[f]);
    out[f] = n;
  }
  if (out.memory_high !== undefined && out.memory_max !== undefined && out.memory_high > out.memory_max)
    throw refuse('memory_high', `at most memory_max (${formatSize(out.memory_max)})`, raw.memory_high);
  if (present(raw.cpu_max)) {
    const n = numberOf(raw.cpu_max);
    if (!(n >= 0.01 && n <= MAX_CORES)) throw refuse('cpu_max', `cores from 0.01 to ${MAX_CORES} (0.5: half a core)`, raw.cpu_max);
    out.cpu_max = Math.round(n * 1000) / 1000;
  }
  if (present(raw.pids_max)) {
    const n = numberOf(raw.pids_max);
    if (!(Number.isInteger(n) && n >= 1 && n <= MAX_PIDS)) throw refuse('pids_max', `a whole number of processes 1-${MAX_PIDS}`, raw.pids_max);
    out.pids_max = n;
  }
  if (present(raw.io_weight)) {
    const n = numberOf(raw.io_weight);
    if (!(Number.isInteger(n) && n >= 1 && n <= 10_000)) throw refuse('io_weight', 'a whole number 1-10000 (100: the default share)', raw.io_weight);
    out.io_weight = n;
  }
  return out;
}

/**
 * The limits a run gets: the message's where it asks for less than its queue allows, the queue's
 * otherwise. A message never gets more than its queue: asking for more gets the queue's limit, since
 * the queue's config may have been lowered after the message was made.
 */
export function effectiveLimits(queue: RunLimits, msg: Record<string, unknown>): RunLimits {
  const out: RunLimits = {};
  for (const f of RUN_LIMIT_FIELDS) {
    const asked = typeof msg[f] === 'number' ? (msg[f] as number) : undefined;
    const allowed = queue[f];
    const v = asked === undefined ? allowed : allowed === undefined ? asked : Math.min(asked, allowed);
    if (v !== undefined) out[f] = v;
  }
  return out;
}

/** Whether any limit is set. */
export function hasLimits(l: RunLimits): boolean {
  return RUN_LIMIT_FIELDS.some((f) => l[f] !== undefined);
}
