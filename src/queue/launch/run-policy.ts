// One run's effective policy (message fields over queue defaults, rq-beyond §B0.5) and the RQ_* variables that tell the script (§B1.7), with its trace context.
import path from 'node:path';
import { DEFAULT_MAX_LINE_BYTES, type QueueConfig } from '../../config/queue-config.js';
import type { RetrySettings } from '../../message/job-fields.js';
import { expandLimit } from '../../message/limit-key.js';
import type { Message } from '../../message/message.js';
import { TRACE_ENV, TRACE_FIELDS, type TraceContext } from '../../message/trace-context.js';
import { failuresOf, lastFailureEnv, retrySettings, seconds } from '../rules/retry-policy.js';
import type { DeadlineLimits } from '../rules/run-deadlines.js';
import type { OutputBounds } from './run-log.js';
import { type RunLimits, effectiveLimits, hasLimits } from '../../message/run-limits.js';

export interface RunPolicy {
  retry: RetrySettings;
  limits: DeadlineLimits;
  output: OutputBounds;
  /** Set only for the features in use: a classic message gets none of them. */
  env: Readonly<Record<string, string>>;
  /** What the run may use: the message's limits within its queue's; absent when neither sets any. */
  runLimits?: RunLimits;
}

/**
 * The daemon's environment as its scripts inherit it, without a TRACEPARENT or TRACESTATE of its
 * own (a daemon started inside a traced job): a run is in the trace of its message, or in none,
 * and a script's `rq sendmesg` would otherwise put every follow-up into that stale trace. Nor with
 * `notInherited`, what rq-mgr set for the queue process alone (node-flags.ts).
 */
export function inheritedEnv(env: NodeJS.ProcessEnv, notInherited: readonly string[] = []): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const f of TRACE_FIELDS) delete copy[TRACE_ENV[f]];
  for (const k of notInherited) delete copy[k];
  return copy;
}

/** TERM → KILL for this queue: its `kill_grace`, else the daemon's default. */
export function killGraceOf(config: Pick<QueueConfig, 'kill_grace'>, defaultMs: number): number {
  return config.kill_grace === undefined ? defaultMs : config.kill_grace * 1000;
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

/** `trace`: the context the script continues, the message's own unless rq exports a span for the run (observers/trace-spans.ts). */
export function runPolicy(msg: Message, config: QueueConfig, jobDir: string, graceMs: number, startMs: number, trace: TraceContext = msg): RunPolicy {
  const retry = retrySettings(msg, config);
  const timeout = num(msg.timeout) ?? config.timeout;
  const heartbeat = num(msg.heartbeat_timeout) ?? config.heartbeat_timeout;
  const limits: DeadlineLimits = { timeout, heartbeat };
  if (heartbeat !== undefined && config.heartbeat_output) limits.outputFile = path.join(jobDir, 'stdio.log');

  const env: Record<string, string> = {};
  const failures = failuresOf(msg);
  if (retry.max_retries > 0 || failures > 0) {
    env.RQ_ATTEMPT = String(failures + 1);
    env.RQ_MAX_RETRIES = String(retry.max_retries);
  }
  const last = msg.last_failure as { text?: unknown } | undefined;
  if (typeof last?.text === 'string') env.RQ_LAST_FAILURE = lastFailureEnv(last.text);
  if (typeof msg.priority === 'number' && msg.priority !== 0) env.RQ_PRIORITY = String(msg.priority);
  if (timeout !== undefined) {
    env.RQ_TIMEOUT = seconds(timeout);
    env.RQ_DEADLINE = String(Math.floor(startMs / 1000 + timeout));
  }
  if (Array.isArray(msg.tags) && msg.tags.length) env.RQ_TAGS = msg.tags.join(',');
  const done = msg.depends_done as Record<string, string> | undefined;
  if (done && Object.keys(done).length)
    env.RQ_DEPENDS = Object.entries(done)
      .map(([ref, state]) => `${ref}=${state}`)
      .join(' ');
  const limit = typeof msg.limit === 'string' ? msg.limit : config.limit;
  if (limit !== undefined) env.RQ_LIMIT = expandLimit(limit, msg, config.name);
  // Unprefixed, as OpenTelemetry's SDKs read them, so the script's spans join the sender's trace.
  for (const f of TRACE_FIELDS) if (typeof trace[f] === 'string') env[TRACE_ENV[f]] = trace[f];
  if (heartbeat !== undefined) env.RQ_HEARTBEAT_TIMEOUT = seconds(heartbeat);
  if (timeout !== undefined || heartbeat !== undefined) env.RQ_KILL_GRACE = seconds(graceMs / 1000);
  const output: OutputBounds = { maxLineBytes: config.max_line_bytes ?? DEFAULT_MAX_LINE_BYTES };
  if (config.max_log_bytes !== undefined) output.maxLogBytes = config.max_log_bytes;
  const runLimits = effectiveLimits(config, msg);
  return { retry, limits, output, env, ...(hasLimits(runLimits) ? { runLimits } : {}) };
}
