import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { QUEUE_ONLY_SETTINGS } from '../../src/message/create-fields.js';
import {
  DEFAULT_EXEC_PREFIX,
  execPrefixOf,
  isTruthyFlag,
  loadQueueConfig,
  normaliseQueueConfig,
  parseQueueConfig,
  validateQueueOptions,
} from '../../src/config/queue-config.js';

const LABEL = 'queues/test/config.json';
const base = { name: 'test', script: './test/test_script.sh', num_workers: 1 };
const norm = (extra: Record<string, unknown>) => normaliseQueueConfig({ ...base, ...extra }, LABEL);
const problem = (raw: unknown): string => {
  try {
    normaliseQueueConfig(raw, LABEL);
  } catch (err) {
    expect(err).toBeInstanceOf(RqError);
    expect((err as RqError).code).toBe('RQ_ERR_CONFIG');
    return (err as RqError).message;
  }
  throw new Error('expected a config error');
};

describe('normaliseQueueConfig (sublimation)', () => {
  it('produces the classic shape and key order', () => {
    const cfg = normaliseQueueConfig({
      blocking_params: [2],
      extra: 'dropped',
      env_vars: { A: 'b' },
      num_workers: '3',
      exec_prefix: '',
      script: 's.sh',
      name: 'test',
    });
    expect(JSON.stringify(cfg)).toBe(
      '{"name":"test","script":"s.sh","num_workers":3,"exec_prefix":"","env_vars":{"A":"b"},"coalesce_params":[],"blocking_params":[2]}',
    );
  });

  it('keeps exec_prefix null when null or absent; the default prefix applies at exec time', () => {
    expect(norm({}).exec_prefix).toBeNull();
    expect(norm({ exec_prefix: null }).exec_prefix).toBeNull();
    expect(execPrefixOf(norm({}))).toBe(DEFAULT_EXEC_PREFIX);
    expect(execPrefixOf(norm({ exec_prefix: '' }))).toBe('');
    expect(problem({ ...base, exec_prefix: 5 })).toBe(
      `${LABEL}: exec_prefix: expected a command prefix (string; null or absent means "bash -lc "), received 5`,
    );
  });

  it('builds coalesce_params from the legacy flags', () => {
    for (const t of [true, 'true', 'yes', '1', 1]) expect(isTruthyFlag(t)).toBe(true);
    for (const f of [false, 'no', 0, '0', 'TRUE', null, undefined]) expect(isTruthyFlag(f)).toBe(false);
    expect(norm({ coalesce: 'yes', coalesce_param1: '1', coalesce_param2: 'no', coalesce_param3: true, coalesce_params: [4] }).coalesce_params).toEqual([1, 3]);
    expect(norm({ coalesce: 'no', coalesce_param1: '1' }).coalesce_params).toEqual([]);
    expect(norm({ coalesce_params: [2, '4'] }).coalesce_params).toEqual([2, 4]);
  });

  it('turns a non-object env_vars into {} and stringifies scalar values', () => {
    expect(norm({ env_vars: 'x' }).env_vars).toEqual({});
    expect(norm({ env_vars: [1] }).env_vars).toEqual({});
    expect(norm({ env_vars: { N: 3, B: true } }).env_vars).toEqual({ N: '3', B: 'true' });
    expect(problem({ ...base, env_vars: { X: { y: 1 } } })).toBe(`${LABEL}: env_vars.X: expected a string value, received {"y":1}`);
    // A name the environment cannot hold: empty, with "=", or with NUL.
    for (const name of ['', 'A=B', 'A\u0000B']) {
      expect(problem({ ...base, env_vars: { [name]: 'x' } })).toBe(
        `${LABEL}: env_vars: expected variable names without "=" or NUL, received ${JSON.stringify(name)}`,
      );
    }
  });

  it('keeps a schedule for the cron feature', () => {
    expect(norm({ schedule: [{ cron: '0 3 * * *', param1: 'ALLQUEUES', param2: 30, other: 1 }] }).schedule).toEqual([
      { cron: '0 3 * * *', param1: 'ALLQUEUES', param2: '30' },
    ]);
    expect(norm({}).schedule).toBeUndefined();
    expect(problem({ ...base, schedule: {} })).toBe(`${LABEL}: schedule: expected an array of {"cron": ..., "param1": ...} objects, received {}`);
    expect(problem({ ...base, schedule: [{ param1: 'x' }] })).toBe(
      `${LABEL}: schedule[0].cron: expected a cron expression (non-empty string), received nothing`,
    );
  });

  it('names file, field, expected and received for each refused value', () => {
    expect(problem([])).toBe(`${LABEL}: expected a JSON object, received []`);
    expect(problem({ ...base, name: 'a/b' })).toMatch(new RegExp(`^${LABEL}: name: expected letters, digits, '-' or '_' .*, received "a/b"$`));
    expect(problem({ ...base, name: undefined })).toBe(`${LABEL}: name: expected a string, received nothing`);
    expect(problem({ ...base, script: '' })).toBe(`${LABEL}: script: expected a script path (non-empty string of at most 1024 characters), received ""`);
    expect(problem({ ...base, script: 7 })).toBe(`${LABEL}: script: expected a script path (non-empty string of at most 1024 characters), received 7`);
    expect(problem({ ...base, num_workers: 'abc' })).toBe(
      `${LABEL}: num_workers: expected a number of workers 1-128 (integer or numeric string), received "abc"`,
    );
    expect(problem({ ...base, num_workers: 0 })).toBe(`${LABEL}: num_workers: expected a number of workers 1-128 (integer or numeric string), received 0`);
    expect(problem({ ...base, num_workers: 129 })).toMatch(/num_workers: .* received 129$/);
    expect(problem({ ...base, num_workers: undefined })).toMatch(/num_workers: .* received nothing$/);
    expect(problem({ ...base, coalesce_params: [5] })).toBe(`${LABEL}: coalesce_params[0]: expected a param number 1-4, received 5`);
    expect(problem({ ...base, blocking_params: 2 })).toBe(`${LABEL}: blocking_params: expected an array of param numbers 1-4, received 2`);
    expect(problem({ ...base, blocking_params: [1, 'x'] })).toBe(`${LABEL}: blocking_params[1]: expected a param number 1-4, received "x"`);
  });
});

describe('keys that are no setting', () => {
  it('refuses a typo of a setting and a retry setting outside retry, naming it; ignores the rest as the classic daemon did', () => {
    expect(problem({ ...base, timout: 5 })).toBe('queues/test/config.json: timout: unknown setting; did you mean "timeout"?');
    expect(problem({ ...base, exec_prefx: '' })).toBe('queues/test/config.json: exec_prefx: unknown setting; did you mean "exec_prefix"?');
    expect(problem({ ...base, max_retries: 3 })).toBe(
      'queues/test/config.json: max_retries: not a setting at this level; did you mean {"retry": {"max_retries": ...}}?',
    );
    expect(problem({ ...base, retries: 3 })).toBe('queues/test/config.json: retries: not a setting at this level; did you mean {"retry": {"retries": ...}}?');
    expect(norm({ coalesce_param2: true, coalesce: true, owner: 'ops', url: 'x' }).coalesce_params).toEqual([2]);
    // Beside the setting it is near, a key is the operator's own: `scripts` with `script`, `timeouts` with `timeout`.
    expect(norm({ scripts: ['a'], timeout: 5, timeouts: 'mine' }).timeout).toBe(5);
  });

  it("refuses a message's own field (priority, tags, depends), saying how a message is given it", () => {
    expect(problem({ ...base, priority: 5 })).toBe(
      `queues/test/config.json: priority: not a queue setting but each message's own; give it with the message (create_message's "priority", rq sendmesg --priority N)`,
    );
    expect(problem({ ...base, tags: ['a'] })).toMatch(/: tags: not a queue setting .*rq sendmesg --tags a,b\)$/);
    expect(problem({ ...base, depends: [] })).toMatch(/: depends: not a queue setting .*rq sendmesg --depends <queue>\/<id>\)$/);
    // A typo of one is refused too, as it would be lost as silently.
    expect(problem({ ...base, priorty: 3 })).toBe(
      `queues/test/config.json: priorty: unknown setting; did you mean "priority"? That is not a queue setting but each message's own; give it with the message (create_message's "priority", rq sendmesg --priority N)`,
    );
    // Read from the object itself: a name its prototype carries is no such field.
    expect(norm({ constructor: 1, toString: 'x' }).name).toBe('test');
  });
});

describe('validateQueueOptions (classic texts)', () => {
  it('returns null for a good config', () => {
    expect(validateQueueOptions(base)).toBeNull();
    expect(validateQueueOptions({ ...base, num_workers: '5' })).toBeNull();
  });

  it('checks name, then num_workers, then script, with the exact texts', () => {
    expect(validateQueueOptions({})).toBe('json config is missing name field');
    expect(validateQueueOptions('nope')).toBe('json config is missing name field');
    expect(validateQueueOptions({ ...base, name: '' })).toBe('json config has invalid name (size)');
    expect(validateQueueOptions({ ...base, name: 'x'.repeat(129) })).toBe('json config has invalid name (size)');
    expect(validateQueueOptions({ ...base, name: 5 })).toBe('json config has invalid name (not String)');
    expect(validateQueueOptions({ name: 'q', script: 's' })).toBe('json config is missing num_workers field');
    expect(validateQueueOptions({ ...base, num_workers: 0 })).toBe('json config has invalid num_workers field (out of range 1..128)');
    expect(validateQueueOptions({ ...base, num_workers: 'abc' })).toBe('json config has invalid num_workers field (out of range 1..128)');
    expect(validateQueueOptions({ name: 'q', num_workers: 1 })).toBe('json config is missing script field');
    expect(validateQueueOptions({ ...base, script: '' })).toBe('json config has invalid script (size)');
    expect(validateQueueOptions({ ...base, script: 'x'.repeat(1025) })).toBe('json config has invalid script (size)');
    expect(validateQueueOptions({ ...base, script: 12 })).toBe('json config has invalid script (not String)');
  });
});

describe('loadQueueConfig', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-queue-config-'));
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it('reads and normalises a real file', async () => {
    const file = path.join(dir, 'config.json');
    await fs.writeFile(file, JSON.stringify({ ...base, num_workers: '2', coalesce: true, coalesce_param2: 1 }));
    expect(await loadQueueConfig(file)).toEqual({ ...base, num_workers: 2, exec_prefix: null, env_vars: {}, coalesce_params: [2], blocking_params: [] });
  });

  it('names the file for bad JSON and a missing file', async () => {
    const file = path.join(dir, 'bad.json');
    await fs.writeFile(file, '{"name": "test",');
    await expect(loadQueueConfig(file, LABEL)).rejects.toThrow(new RegExp(`^${LABEL}: not valid JSON: `));
    await expect(loadQueueConfig(path.join(dir, 'none.json'), LABEL)).rejects.toThrow(`${LABEL}: cannot read: no such file`);
    expect(() => parseQueueConfig('null', LABEL)).toThrow(`${LABEL}: expected a JSON object, received null`);
  });
});

describe('run-policy keys (rq-beyond §B1.4)', () => {
  it('are kept when valid, after the classic keys, and absent when not set', () => {
    const cfg = norm({
      retry: { max_retries: '5', backoff_base: 2, retry_jitter: 0 },
      timeout: 3600,
      kill_grace: 0,
      heartbeat_timeout: 300,
      heartbeat_output: true,
    });
    expect(cfg.retry).toEqual({ max_retries: 5, backoff_base: 2, retry_jitter: 0 });
    expect(Object.keys(cfg).slice(-5)).toEqual(['retry', 'timeout', 'kill_grace', 'heartbeat_timeout', 'heartbeat_output']);
    expect(Object.keys(norm({}))).toEqual(['name', 'script', 'num_workers', 'exec_prefix', 'env_vars', 'coalesce_params', 'blocking_params']);
  });

  // The settings a message is refused (create-fields.ts): each is one a queue's config.json takes.
  const valid: Record<string, unknown> = {
    kill_grace: 5,
    heartbeat_output: true,
    max_interrupts: 3,
    max_line_bytes: 4096,
    max_log_bytes: 1024,
    limits_best_effort: true,
  };
  it.each(QUEUE_ONLY_SETTINGS)('take %s, a setting only a queue has', (key) => {
    expect(key in valid).toBe(true);
    expect(norm({ [key]: valid[key] })).toMatchObject({ [key]: valid[key] });
  });

  it('refuse a bad value naming the file and the key path', () => {
    expect(problem({ ...base, retry: { max_retries: 'five' } })).toBe(`${LABEL}: retry.max_retries: expected a whole number 0-1000, received "five"`);
    expect(problem({ ...base, retry: { tries: 3 } })).toBe(
      `${LABEL}: retry.tries: expected one of max_retries, backoff_base, min_retry_delay, max_retry_delay, retry_jitter, received "tries"`,
    );
    expect(problem({ ...base, retry: 5 })).toBe(
      `${LABEL}: retry: expected an object of max_retries, backoff_base, min_retry_delay, max_retry_delay, retry_jitter, received 5`,
    );
    expect(problem({ ...base, kill_grace: 301 })).toBe(`${LABEL}: kill_grace: expected seconds >= 0 and <= 300, received 301`);
    expect(problem({ ...base, timeout: 0 })).toBe(`${LABEL}: timeout: expected seconds > 0 and <= 2592000, received 0`);
    expect(problem({ ...base, heartbeat_output: 'yes' })).toBe(`${LABEL}: heartbeat_output: expected true or false, received "yes"`);
  });
});

describe('output bounds: max_line_bytes, max_log_bytes', () => {
  it('are kept when valid (numbers or numeric strings) and absent when not set', () => {
    const cfg = norm({ max_line_bytes: '4096', max_log_bytes: 10_485_760 });
    expect(cfg.max_line_bytes).toBe(4096);
    expect(cfg.max_log_bytes).toBe(10_485_760);
    expect(Object.keys(cfg).slice(-2)).toEqual(['max_line_bytes', 'max_log_bytes']);
    expect('max_line_bytes' in norm({})).toBe(false);
    expect('max_log_bytes' in norm({ max_log_bytes: null })).toBe(false);
  });

  it('refuse a value out of range or not whole, naming the file, the field and what was expected', () => {
    expect(problem({ ...base, max_line_bytes: 100 })).toBe(
      `${LABEL}: max_line_bytes: expected a whole number of bytes 1024-67108864 (default 1048576), received 100`,
    );
    expect(problem({ ...base, max_line_bytes: 1.5e9 })).toBe(
      `${LABEL}: max_line_bytes: expected a whole number of bytes 1024-67108864 (default 1048576), received 1500000000`,
    );
    expect(problem({ ...base, max_line_bytes: '1MB' })).toBe(
      `${LABEL}: max_line_bytes: expected a whole number of bytes 1024-67108864 (default 1048576), received "1MB"`,
    );
    expect(problem({ ...base, max_log_bytes: 1023 })).toBe(
      `${LABEL}: max_log_bytes: expected a whole number of bytes, at least 1024 (absent: unlimited), received 1023`,
    );
    expect(problem({ ...base, max_log_bytes: 2048.5 })).toBe(
      `${LABEL}: max_log_bytes: expected a whole number of bytes, at least 1024 (absent: unlimited), received 2048.5`,
    );
  });
});
