// A queue's config.json (spec §1.4): normalisation ("sublimation"), the classic option checks, loading.
import fs from 'node:fs/promises';
import { RqError } from '../errors.js';
import { type JobFields, type RetrySettings, readJobFields, readKillGrace, RETRY_FIELDS } from '../message/job-fields.js';
import { QUEUE_ONLY_SETTINGS } from '../message/create-fields.js';
import { queueNameProblem } from '../message/names.js';
import { readLimit } from '../message/limit-key.js';
import { RUN_LIMIT_FIELDS, type RunLimits, readRunLimits } from '../message/run-limits.js';
import { MESSAGE_OWN_FIELDS, refuseMisspeltKeys } from './misspelt-keys.js';
import { configFieldError, configReadError, parseConfigJson } from './schema-error.js';

/** What runs in front of the script when exec_prefix is null or absent (classic behaviour). */
export const DEFAULT_EXEC_PREFIX = 'bash -lc ';
export const MAX_WORKERS = 128;
export const MAX_SCRIPT_LENGTH = 1024;
/** max_line_bytes: an fd 3 line longer than this is cut and ignored; held in memory up to it. */
export const DEFAULT_MAX_LINE_BYTES = 1_048_576;
const LINE_BYTES_RANGE = [1024, 64 * 1_048_576] as const;
const PARAM_NUMBERS = [1, 2, 3, 4] as const;

/** One entry of the optional `schedule` list (for the cron feature): params sent with each run. */
export interface ScheduleEntry extends Partial<Record<'param1' | 'param2' | 'param3' | 'param4', string>> {
  cron: string;
}

/**
 * The normalised queue config. Key order is the classic one and is kept when it is written back.
 * `exec_prefix` null means "not set": the script runner uses DEFAULT_EXEC_PREFIX; "" means no prefix.
 */
export interface QueueConfig {
  name: string;
  script: string;
  num_workers: number;
  exec_prefix: string | null;
  env_vars: Record<string, string>;
  coalesce_params: number[];
  blocking_params: number[];
  schedule?: ScheduleEntry[];
  /** Run-policy defaults (rq-beyond §B1.4), written after the classic keys and only when set. */
  retry?: Partial<RetrySettings>;
  max_age?: number;
  timeout?: number;
  kill_grace?: number;
  heartbeat_timeout?: number;
  heartbeat_output?: boolean;
  max_interrupts?: number;
  /** rq-beyond §B12: the limit key (or template) of messages that name none. */
  limit?: string;
  /** Longest fd 3 line acted on, bytes; DEFAULT_MAX_LINE_BYTES when absent. */
  max_line_bytes?: number;
  /** Bytes one run may add to its stdio.log; unlimited when absent. */
  max_log_bytes?: number;
  /** What each run may use (memory, CPU, processes, IO), enforced through its cgroup. */
  memory_max?: number;
  memory_high?: number;
  cpu_max?: number;
  pids_max?: number;
  io_weight?: number;
  /** Run scripts even where a limit above cannot be enforced (said at start); else the queue holds in SCRIPTERROR. */
  limits_best_effort?: boolean;
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The classic truthy forms of the legacy flags: true, "true", "yes", "1", 1. */
export function isTruthyFlag(v: unknown): boolean {
  return v === true || v === 1 || v === 'true' || v === 'yes' || v === '1';
}

/** An integer from a number or a numeric string, else NaN (no Ruby-style "3abc" → 3: that hides typos). */
function toInteger(v: unknown): number {
  if (typeof v === 'number') return Number.isInteger(v) ? v : NaN;
  if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) return Number.parseInt(v, 10);
  return NaN;
}

function paramList(raw: unknown, field: string, fileLabel: string): number[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw configFieldError(fileLabel, field, 'an array of param numbers 1-4', raw);
  return raw.map((v, i) => {
    const n = toInteger(v);
    if (!(n >= 1 && n <= 4)) throw configFieldError(fileLabel, `${field}[${i}]`, 'a param number 1-4', v);
    return n;
  });
}

// Values are stringified when scalar because that is what a user writing {"N": 3} means;
// anything else cannot become an environment variable and is an error.
function envVars(raw: unknown, fileLabel: string): Record<string, string> {
  if (!isObject(raw)) return {};
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (key === '' || key.includes('=') || key.includes('\0')) {
      throw configFieldError(fileLabel, 'env_vars', 'variable names without "=" or NUL', key);
    }
    if (typeof value === 'string') out[key] = value;
    else if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') out[key] = String(value);
    else throw configFieldError(fileLabel, `env_vars.${key}`, 'a string value', value);
  }
  return out;
}

/** A param value: strings as they are, numbers as their text (what a message field holds). */
function paramValue(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

function schedule(raw: unknown, fileLabel: string): ScheduleEntry[] {
  if (!Array.isArray(raw)) throw configFieldError(fileLabel, 'schedule', 'an array of {"cron": ..., "param1": ...} objects', raw);
  return raw.map((entry, i) => {
    if (!isObject(entry)) throw configFieldError(fileLabel, `schedule[${i}]`, 'an object {"cron": "<expression>", ...}', entry);
    if (typeof entry.cron !== 'string' || entry.cron.trim() === '') {
      throw configFieldError(fileLabel, `schedule[${i}].cron`, 'a cron expression (non-empty string)', entry.cron);
    }
    const out: ScheduleEntry = { cron: entry.cron };
    for (const n of PARAM_NUMBERS) {
      const key = `param${n}` as const;
      if (entry[key] === undefined) continue;
      const v = paramValue(entry[key]);
      if (v === undefined) throw configFieldError(fileLabel, `schedule[${i}].${key}`, 'a string', entry[key]);
      out[key] = v;
    }
    return out;
  });
}

/** Every key a queue's config.json may set (the classic ones, their legacy coalesce flags, rq-beyond §B1.4's run policy: a queue-only setting goes in QUEUE_ONLY_SETTINGS, which messages are refused). */
const QUEUE_SETTINGS: readonly string[] = [
  ...['name', 'script', 'num_workers', 'exec_prefix', 'env_vars', 'coalesce', 'coalesce_params', 'blocking_params', 'schedule', 'retry', 'max_age'],
  ...['timeout', 'heartbeat_timeout', 'limit', ...QUEUE_ONLY_SETTINGS],
  ...PARAM_NUMBERS.map((n) => `coalesce_param${n}`),
  ...RUN_LIMIT_FIELDS,
];

/**
 * Sublimation: the exact fields the queue uses, in the classic key order. Strict where the classic
 * daemon silently ran a broken queue (bad name, no script, 0 workers, param numbers outside 1..4).
 */
export function normaliseQueueConfig(raw: unknown, fileLabel = 'config.json'): QueueConfig {
  if (!isObject(raw)) throw configFieldError(fileLabel, '', 'a JSON object', raw);
  refuseMisspeltKeys(raw, QUEUE_SETTINGS, fileLabel, { inside: { retry: [...RETRY_FIELDS, 'retries'] }, messageOwn: MESSAGE_OWN_FIELDS });

  const nameProblem = queueNameProblem(raw.name);
  if (nameProblem) throw RqError.of('RQ_ERR_CONFIG', `${fileLabel}: name: ${nameProblem.replace(/^queue name: /, '')}`);
  const name = raw.name as string;

  const script = raw.script;
  if (typeof script !== 'string' || script.length === 0 || script.length > MAX_SCRIPT_LENGTH) {
    throw configFieldError(fileLabel, 'script', `a script path (non-empty string of at most ${MAX_SCRIPT_LENGTH} characters)`, script);
  }

  const numWorkers = toInteger(raw.num_workers);
  if (!(numWorkers >= 1 && numWorkers <= MAX_WORKERS)) {
    throw configFieldError(fileLabel, 'num_workers', `a number of workers 1-${MAX_WORKERS} (integer or numeric string)`, raw.num_workers);
  }

  const prefix = raw.exec_prefix;
  if (prefix !== undefined && prefix !== null && typeof prefix !== 'string') {
    throw configFieldError(fileLabel, 'exec_prefix', `a command prefix (string; null or absent means "${DEFAULT_EXEC_PREFIX}")`, prefix);
  }

  const coalesce = isTruthyFlag(raw.coalesce)
    ? PARAM_NUMBERS.filter((n) => isTruthyFlag(raw[`coalesce_param${n}`]))
    : paramList(raw.coalesce_params, 'coalesce_params', fileLabel);

  const out: QueueConfig = {
    name,
    script,
    num_workers: numWorkers,
    exec_prefix: prefix ?? null,
    env_vars: envVars(raw.env_vars, fileLabel),
    coalesce_params: coalesce,
    blocking_params: paramList(raw.blocking_params, 'blocking_params', fileLabel),
  };
  if (raw.schedule !== undefined) out.schedule = schedule(raw.schedule, fileLabel);
  return Object.assign(out, runPolicy(raw, fileLabel));
}

/** The optional run-policy keys of §B1.4; absent keys stay absent so a classic config reads back unchanged. */
function runPolicy(raw: Obj, fileLabel: string): Partial<QueueConfig> {
  const refuse = (field: string, expected: string, v: unknown) => configFieldError(fileLabel, field, expected, v);
  const out: Partial<QueueConfig> = {};
  if (raw.retry !== undefined && raw.retry !== null) {
    if (!isObject(raw.retry)) throw refuse('retry', `an object of ${RETRY_FIELDS.join(', ')}`, raw.retry);
    const known = new Set<string>([...RETRY_FIELDS, 'retries']);
    const stray = Object.keys(raw.retry).find((k) => !known.has(k));
    if (stray !== undefined) throw refuse(`retry.${stray}`, `one of ${RETRY_FIELDS.join(', ')}`, stray);
    out.retry = readJobFields(raw.retry, refuse, 'retry.') as Partial<RetrySettings>;
  }
  const limits: JobFields = readJobFields({ max_age: raw.max_age, timeout: raw.timeout, heartbeat_timeout: raw.heartbeat_timeout }, refuse);
  // In the order of rq-beyond §B1.4's example, which is how the file is written back.
  if (limits.max_age !== undefined) out.max_age = limits.max_age;
  if (limits.timeout !== undefined) out.timeout = limits.timeout;
  if (raw.kill_grace !== undefined && raw.kill_grace !== null) out.kill_grace = readKillGrace(raw.kill_grace, refuse);
  if (limits.heartbeat_timeout !== undefined) out.heartbeat_timeout = limits.heartbeat_timeout;
  if (raw.heartbeat_output !== undefined && raw.heartbeat_output !== null) {
    if (typeof raw.heartbeat_output !== 'boolean') throw refuse('heartbeat_output', 'true or false', raw.heartbeat_output);
    out.heartbeat_output = raw.heartbeat_output;
  }
  if (raw.max_interrupts !== undefined && raw.max_interrupts !== null) {
    const n = toInteger(raw.max_interrupts);
    if (!(n >= 1 && n <= 1000)) throw refuse('max_interrupts', 'a whole number 1-1000', raw.max_interrupts);
    out.max_interrupts = n;
  }
  if (raw.limit !== undefined && raw.limit !== null) out.limit = readLimit(raw.limit, refuse);
  // An empty limit in a config is a mistake (a template left blank), not "unlimited": absent is.
  const blank = RUN_LIMIT_FIELDS.find((f) => raw[f] === '');
  if (blank) throw refuse(blank, 'a limit, or no key at all for none', '');
  Object.assign(out, outputBounds(raw, refuse), readRunLimits(raw, refuse) satisfies RunLimits);
  if (raw.limits_best_effort !== undefined && raw.limits_best_effort !== null) {
    if (typeof raw.limits_best_effort !== 'boolean') throw refuse('limits_best_effort', 'true or false', raw.limits_best_effort);
    out.limits_best_effort = raw.limits_best_effort;
  }
  return out;
}

/** max_line_bytes and max_log_bytes: whole numbers of bytes, absent when not set. */
function outputBounds(raw: Obj, refuse: (field: string, expected: string, v: unknown) => RqError): Partial<QueueConfig> {
  const out: Partial<QueueConfig> = {};
  if (raw.max_line_bytes !== undefined && raw.max_line_bytes !== null) {
    const n = toInteger(raw.max_line_bytes);
    const [lo, hi] = LINE_BYTES_RANGE;
    if (!(n >= lo && n <= hi)) throw refuse('max_line_bytes', `a whole number of bytes ${lo}-${hi} (default ${DEFAULT_MAX_LINE_BYTES})`, raw.max_line_bytes);
    out.max_line_bytes = n;
  }
  if (raw.max_log_bytes !== undefined && raw.max_log_bytes !== null) {
    const n = toInteger(raw.max_log_bytes);
    if (!(n >= 1024 && n <= Number.MAX_SAFE_INTEGER))
      throw refuse('max_log_bytes', 'a whole number of bytes, at least 1024 (absent: unlimited)', raw.max_log_bytes);
    out.max_log_bytes = n;
  }
  return out;
}

/** The prefix the script runner puts in front of the script path. */
export function execPrefixOf(cfg: Pick<QueueConfig, 'exec_prefix'>): string {
  return cfg.exec_prefix ?? DEFAULT_EXEC_PREFIX;
}

// Ruby's #size as the classic check sees it; undefined where Ruby would raise (nil, true, Float).
function rubySize(v: unknown): number | undefined {
  if (typeof v === 'string') return [...v].length;
  if (typeof v === 'number') return Number.isInteger(v) ? 8 : undefined;
  if (Array.isArray(v)) return v.length;
  if (isObject(v)) return Object.keys(v).length;
  return undefined;
}

// Ruby's #to_i: leading integer of a string, truncation of a number, nil → 0; NaN where Ruby raises.
function rubyToI(v: unknown): number {
  if (v === null) return 0;
  if (typeof v === 'number') return Math.trunc(v);
  if (typeof v === 'string') {
    const m = /^\s*([+-]?\d+)/.exec(v);
    return m ? Number.parseInt(m[1], 10) : 0;
  }
  return NaN;
}

function inRange(n: number | undefined, lo: number, hi: number): boolean {
  return n !== undefined && n >= lo && n <= hi;
}

/** The classic `validate_options` checks, in their order, with their exact texts; null when fine. */
export function validateQueueOptions(raw: unknown): string | null {
  const o: Obj = isObject(raw) ? raw : {};
  if (!('name' in o)) return 'json config is missing name field';
  if (!inRange(rubySize(o.name), 1, 128) && rubySize(o.name) !== undefined) return 'json config has invalid name (size)';
  if (typeof o.name !== 'string') return 'json config has invalid name (not String)';

  if (!('num_workers' in o)) return 'json config is missing num_workers field';
  if (!inRange(rubyToI(o.num_workers), 1, MAX_WORKERS)) return 'json config has invalid num_workers field (out of range 1..128)';

  if (!('script' in o)) return 'json config is missing script field';
  if (!inRange(rubySize(o.script), 1, MAX_SCRIPT_LENGTH) && rubySize(o.script) !== undefined) return 'json config has invalid script (size)';
  if (typeof o.script !== 'string') return 'json config has invalid script (not String)';
  return null;
}

export function parseQueueConfig(text: string, fileLabel: string): QueueConfig {
  return normaliseQueueConfig(parseConfigJson(text, fileLabel), fileLabel);
}

/** Reads and normalises a queue's config.json; `fileLabel` is how errors name it (default: the path). */
export async function loadQueueConfig(file: string, fileLabel: string = file): Promise<QueueConfig> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw configReadError(fileLabel, err);
  }
  return parseQueueConfig(text, fileLabel);
}
