// The options of sendmesg, prepmesg and single_que: one table that the parser, the help and the fields sent (rq-options.ts messageFields) all read.
import type { OptionSpec } from './command-spec.js';

const secs = (help: string, arg = 'S'): OptionSpec => ({ name: '', arg, help });

/** The message fields, in the order the classic tool copies them, then rq-beyond's; `kind: 'either'` for the bare flags the classic tool takes. */
export const MESSAGE_OPTIONS: OptionSpec[] = [
  {
    name: 'dest',
    arg: 'QUEUE|URL',
    required: true,
    expected: 'a queue name or http://host:port/q/<queue> URL',
    help: 'the queue to send to, or http://host:port/q/<queue> of another host (needs --relay-ok)',
  },
  { name: 'src', arg: 'TEXT', help: 'who sends it (free text, shown in the web UI)' },
  { name: 'count', arg: 'N', help: 'how many times it was resent so far (whole number >= 0)' },
  { name: 'max_count', arg: 'N', help: 'the most resends allowed (whole number >= 0)' },
  ...[1, 2, 3, 4].map((n): OptionSpec => ({ name: `param${n}`, arg: 'TEXT', help: `parameter ${n} for the queue's script (RQ_PARAM${n})` })),
  { name: 'due', arg: 'EPOCH', help: 'do not run before this time (epoch seconds)' },
  { name: 'force_remote', kind: 'either', arg: 'VALUE', help: 'the relay delivers to the remote host even when the dest is on this host' },
  { ...secs('the priority: lower runs first (-1000000 to 1000000, default 0)', 'N'), name: 'priority' },
  { ...secs('retries after a failed run (0-1000, default 0)', 'N'), name: 'max_retries' },
  { ...secs('seconds of the first retry delay, doubled per retry'), name: 'backoff_base' },
  { ...secs('shortest retry delay in seconds'), name: 'min_retry_delay' },
  { ...secs('longest retry delay in seconds'), name: 'max_retry_delay' },
  { ...secs('random part of each retry delay, 0 to 1', 'F'), name: 'retry_jitter' },
  { ...secs('seconds after its due by which it must have started, else it expires'), name: 'max_age' },
  { ...secs('time by which it must have started, else it expires (epoch seconds)', 'EPOCH'), name: 'expire_at' },
  { ...secs('kill a run after this many seconds'), name: 'timeout' },
  { ...secs('kill a run silent (no fd 3 line) for this many seconds'), name: 'heartbeat_timeout' },
  { name: 'memory_max', arg: 'SIZE', help: "the run's memory (512M, 2G), at most its queue's; past it the kernel kills (OOM)" },
  { name: 'memory_high', arg: 'SIZE', help: "the run's memory past which it is held and let on a step at a time, at most its queue's" },
  { name: 'cpu_max', arg: 'CORES', help: "the run's CPU as cores (0.5: half a core), at most its queue's" },
  { name: 'pids_max', arg: 'N', help: "processes the run may have at once, at most its queue's" },
  { name: 'io_weight', arg: 'N', help: "the run's share of disk time, 1-10000 (100: the default), at most its queue's" },
  { name: 'retries', arg: 'N', help: 'the same as --max_retries' },
  { name: 'tags', arg: 'a,b', help: 'up to 32 tags, comma-separated (see rq tagged)' },
  {
    name: 'depends',
    arg: '<queue>/<id>',
    help: 'wait in the que until these messages (comma-separated) have finished; in a fleet, full ids of other hosts too',
  },
  { name: 'depends_fail', arg: 'fail|run|wait', help: 'what a failed dependency does: fail this one (default), run it anyway, or keep waiting' },
  { name: 'limit', arg: 'KEY', help: 'take a slot of this concurrency key while running ({param1}..{param4}, {queue} expand)' },
  { name: 'limit_concurrency', arg: 'N', help: 'slots of the --limit key when config/limits.json has none (1-10000)' },
  {
    name: 'traceparent',
    arg: 'TRACEPARENT',
    help: "00-<trace id>-<parent id>-<flags>: the W3C trace the run continues (the script's TRACEPARENT); absent, $TRACEPARENT and $TRACESTATE are taken",
  },
  { name: 'tracestate', arg: 'k=v,...', help: "the W3C tracestate of --traceparent (the script's TRACESTATE)" },
];

/** Options of the create commands that are not message fields. */
export const RELAY_OK: OptionSpec = {
  name: 'relay-ok',
  kind: 'either',
  arg: 'VALUE',
  help: 'allow an http:// dest: the message goes to the local relay queue',
};
export const IDEMPOTENCY_KEY: OptionSpec = {
  name: 'idempotency-key',
  arg: 'KEY',
  help: "sent again with the same key within 24 h, the first message's id is printed and nothing is created",
};
export const WAIT: OptionSpec = {
  name: 'wait',
  kind: 'either',
  arg: 'SECONDS',
  help: 'then wait until the message has finished and exit by its outcome, as rq wait does (bare: no time limit)',
};

/** The field names sent to the queue: every message option. */
export const MESSAGE_KEYS: readonly string[] = MESSAGE_OPTIONS.map((o) => o.name);
