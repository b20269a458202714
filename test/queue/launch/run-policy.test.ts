// One run's policy: message fields over queue defaults, the deadlines, and exactly which RQ_* and trace variables a script is told (rq-beyond §B0.5, §B1.7).
import { describe, expect, it } from 'vitest';
import type { QueueConfig } from '../../../src/config/queue-config.js';
import { RETRY_DEFAULTS } from '../../../src/message/job-fields.js';
import type { Message } from '../../../src/message/message.js';
import { inheritedEnv, killGraceOf, runPolicy } from '../../../src/queue/launch/run-policy.js';

const config = (extra: Partial<QueueConfig> = {}): QueueConfig => ({
  name: 'mail',
  script: '/s/run',
  num_workers: 1,
  exec_prefix: null,
  env_vars: {},
  coalesce_params: [],
  blocking_params: [],
  ...extra,
});
const msg = (extra: Record<string, unknown> = {}): Message => ({
  msg_id: '20261121.1643.46.613.1',
  dest: 'mail',
  orig_msg_id: 'o',
  count: 0,
  max_count: 15,
  due: 0,
  ...extra,
});
const START = 1_800_000_000_250;

describe('runPolicy: a classic message', () => {
  it('gets no variables at all, the default retry settings and no deadlines', () => {
    const p = runPolicy(msg({ priority: 0, tags: [] }), config(), '/j', 5000, START);
    expect(p.env).toEqual({});
    expect(p.retry).toEqual(RETRY_DEFAULTS);
    expect(p.limits).toEqual({ timeout: undefined, heartbeat: undefined });
  });
});

describe('runPolicy: each feature sets its own variables', () => {
  it('retries: attempt and budget when a budget exists or a failure was counted', () => {
    expect(runPolicy(msg({ max_retries: 3 }), config(), '/j', 5000, START).env).toEqual({ RQ_ATTEMPT: '1', RQ_MAX_RETRIES: '3' });
    expect(runPolicy(msg({ failures: 2 }), config({ retry: { max_retries: 4 } }), '/j', 5000, START).env).toEqual({ RQ_ATTEMPT: '3', RQ_MAX_RETRIES: '4' });
    // A counted failure without a budget (a retry line of a classic queue) still tells the attempt.
    expect(runPolicy(msg({ failures: 1 }), config(), '/j', 5000, START).env).toEqual({ RQ_ATTEMPT: '2', RQ_MAX_RETRIES: '0' });
  });

  it('the last failure, cleaned of control characters', () => {
    expect(runPolicy(msg({ last_failure: { text: 'exit 3\nboom' } }), config(), '/j', 5000, START).env).toEqual({ RQ_LAST_FAILURE: 'exit 3 boom' });
    expect(runPolicy(msg({ last_failure: { text: 5 } }), config(), '/j', 5000, START).env).toEqual({});
  });

  it('a non-zero priority, negative too', () => {
    expect(runPolicy(msg({ priority: -2 }), config(), '/j', 5000, START).env).toEqual({ RQ_PRIORITY: '-2' });
  });

  it('a timeout gives the deadline in epoch seconds and the kill grace; the message wins over the queue', () => {
    const p = runPolicy(msg({ timeout: 2.5 }), config({ timeout: 60 }), '/j', 1500, START);
    expect(p.limits).toEqual({ timeout: 2.5, heartbeat: undefined });
    expect(p.env).toEqual({ RQ_TIMEOUT: '2.5', RQ_DEADLINE: String(Math.floor(START / 1000 + 2.5)), RQ_KILL_GRACE: '1.5' });
    expect(runPolicy(msg(), config({ timeout: 60 }), '/j', 5000, START).env).toMatchObject({ RQ_TIMEOUT: '60', RQ_DEADLINE: '1800000060' });
  });

  it('a heartbeat gives its timeout and the kill grace; the output file only when the queue counts output as a beat', () => {
    const p = runPolicy(msg({ heartbeat_timeout: 10 }), config(), '/j', 5000, START);
    expect(p.limits).toEqual({ timeout: undefined, heartbeat: 10 });
    expect(p.env).toEqual({ RQ_HEARTBEAT_TIMEOUT: '10', RQ_KILL_GRACE: '5' });
    expect(runPolicy(msg(), config({ heartbeat_timeout: 4, heartbeat_output: true }), '/j', 5000, START).limits).toEqual({
      timeout: undefined,
      heartbeat: 4,
      outputFile: '/j/stdio.log',
    });
    expect(runPolicy(msg(), config({ heartbeat_output: true }), '/j', 5000, START).limits).toEqual({ timeout: undefined, heartbeat: undefined });
  });

  it('tags, finished dependencies, and the limit key expanded for this message (the message over the queue)', () => {
    const env = runPolicy(
      msg({ tags: ['a', 'b'], depends_done: { 'q/1': 'done', 'q/2': 'err' }, param1: 't9' }),
      config({ limit: 'api:{param1}' }),
      '/j',
      5000,
      START,
    ).env;
    expect(env).toEqual({ RQ_TAGS: 'a,b', RQ_DEPENDS: 'q/1=done q/2=err', RQ_LIMIT: 'api:t9' });
    expect(runPolicy(msg({ limit: '{queue}-x' }), config({ limit: 'other' }), '/j', 5000, START).env).toEqual({ RQ_LIMIT: 'mail-x' });
    expect(runPolicy(msg({ depends_done: {} }), config(), '/j', 5000, START).env).toEqual({});
  });

  it('the trace context, unprefixed as tracers read it: TRACEPARENT, and TRACESTATE when the message has one', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect(runPolicy(msg({ traceparent, tracestate: 'congo=t61' }), config(), '/j', 5000, START).env).toEqual({
      TRACEPARENT: traceparent,
      TRACESTATE: 'congo=t61',
    });
    expect(runPolicy(msg({ traceparent }), config(), '/j', 5000, START).env).toEqual({ TRACEPARENT: traceparent });
  });

  it('retry settings: message fields over the queue retry object over the defaults', () => {
    const p = runPolicy(msg({ backoff_base: 2 }), config({ retry: { backoff_base: 9, max_retry_delay: 60 } }), '/j', 5000, START);
    expect(p.retry).toEqual({ ...RETRY_DEFAULTS, backoff_base: 2, max_retry_delay: 60 });
  });
});

describe('runPolicy: output bounds and run limits', () => {
  it('bounds the log only when the queue sets max_log_bytes; the line bound always', () => {
    expect(runPolicy(msg(), config({ max_log_bytes: 4096, max_line_bytes: 512 }), '/j', 5000, START).output).toStrictEqual({
      maxLineBytes: 512,
      maxLogBytes: 4096,
    });
    expect(Object.keys(runPolicy(msg(), config(), '/j', 5000, START).output)).toEqual(['maxLineBytes']);
  });

  it("the run's limits: the message's within its queue's, absent when neither sets any", () => {
    expect(runPolicy(msg({ memory_max: 1000, pids_max: 9 }), config({ memory_max: 500 }), '/j', 5000, START).runLimits).toEqual({
      memory_max: 500,
      pids_max: 9,
    });
    expect('runLimits' in runPolicy(msg(), config(), '/j', 5000, START)).toBe(false);
  });
});

describe('inheritedEnv', () => {
  it("drops the daemon's own TRACEPARENT and TRACESTATE, keeps the rest, and leaves the daemon's environment alone", () => {
    const env = { PATH: '/bin', TRACEPARENT: 'x', TRACESTATE: 'y', RQ_ROOT: '/r' };
    expect(inheritedEnv(env)).toEqual({ PATH: '/bin', RQ_ROOT: '/r' });
    expect(env.TRACEPARENT).toBe('x');
  });

  it('drops what rq-mgr set for the queue process alone', () => {
    expect(inheritedEnv({ PATH: '/bin', MALLOC_TRIM_THRESHOLD_: '131072' }, ['MALLOC_TRIM_THRESHOLD_'])).toEqual({ PATH: '/bin' });
  });
});

describe('killGraceOf', () => {
  it('is the queue kill_grace in ms, 0 included, else the default', () => {
    expect(killGraceOf({ kill_grace: 2.5 }, 20_000)).toBe(2500);
    expect(killGraceOf({ kill_grace: 0 }, 20_000)).toBe(0);
    expect(killGraceOf({}, 20_000)).toBe(20_000);
  });
});
