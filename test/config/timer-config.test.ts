import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import { loadTimerConfig, parseTimerConfig, timerNameOf } from '../../src/config/timer-config.js';

const LABEL = 'timers/cleaner.json';
const parse = (obj: unknown, opts = {}) => parseTimerConfig(JSON.stringify(obj), LABEL, opts);
const problem = (text: string, label = LABEL, opts = {}): string => {
  try {
    parseTimerConfig(text, label, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(RqError);
    expect((err as RqError).code).toBe('RQ_ERR_CONFIG');
    return (err as RqError).message;
  }
  throw new Error('expected a config error');
};

describe('timer files', () => {
  it('names timers by the part before the single dot', () => {
    expect(timerNameOf('cleaner.json')).toBe('cleaner');
    expect(timerNameOf('nightly.yaml')).toBe('nightly');
    expect(timerNameOf('a.b.json')).toBeNull();
    expect(timerNameOf('cleaner.yml')).toBeNull();
    expect(timerNameOf('sock')).toBeNull();
  });

  it('parses the shipped cleaner timer and drops unknown keys', () => {
    expect(parse({ period: 86400, msg: { dest: 'cleaner', param1: 'ALLQUEUES', other: 1 }, note: 'x' })).toEqual({
      period: 86400,
      msg: { dest: 'cleaner', param1: 'ALLQUEUES' },
    });
    expect(parse({ period: 60, msg: { dest: 'http://h:3333/q/x', src: 'me', param2: 30 } }).msg).toEqual({
      dest: 'http://h:3333/q/x',
      src: 'me',
      param2: '30',
    });
  });

  it('requires a whole period of at least 60 s unless short periods are allowed', () => {
    expect(problem('{"period":59,"msg":{"dest":"q"}}')).toBe(`${LABEL}: period: expected a whole number of seconds >= 60, received 59`);
    expect(problem('{"period":"3600","msg":{"dest":"q"}}')).toBe(`${LABEL}: period: expected a whole number of seconds >= 60, received "3600"`);
    expect(problem('{"period":90.5,"msg":{"dest":"q"}}')).toBe(`${LABEL}: period: expected a whole number of seconds >= 60, received 90.5`);
    expect(parse({ period: 2, msg: { dest: 'q' } }, { allowShortPeriod: true }).period).toBe(2);
    expect(problem('{"period":0,"msg":{"dest":"q"}}', LABEL, { allowShortPeriod: true })).toBe(
      `${LABEL}: period: expected a whole number of seconds >= 1, received 0`,
    );
  });

  it('requires msg with dest and string params', () => {
    expect(problem('{"period":60}')).toBe(`${LABEL}: msg: expected an object with at least "dest", received nothing`);
    expect(problem('{"period":60,"msg":{}}')).toBe(`${LABEL}: msg.dest: expected a destination queue name or http:// URL (non-empty string), received nothing`);
    expect(problem('{"period":60,"msg":{"dest":"q","param3":{"a":1}}}')).toBe(`${LABEL}: msg.param3: expected a string, received {"a":1}`);
    expect(problem('[]')).toBe(`${LABEL}: expected a JSON object {"period": <seconds>, "msg": {"dest": ...}}, received []`);
    expect(problem('{period: 60}')).toMatch(new RegExp(`^${LABEL}: not valid JSON: `));
  });

  it('carries the run-policy fields of a message, checked as a create checks them', () => {
    expect(parse({ period: 60, msg: { dest: 'q', retries: '3', timeout: 30 } }).msg).toEqual({ dest: 'q', max_retries: 3, timeout: 30 });
    expect(problem('{"period":60,"msg":{"dest":"q","retry_jitter":2}}')).toBe(`${LABEL}: msg.retry_jitter: expected a number from 0 to 1, received 2`);
  });

  it('refuses a misspelt message field, as a create over HTTP does: dropped, the timer would fire without it every period', () => {
    expect(problem('{"period":60,"msg":{"dest":"q","prioirty":3}}')).toBe(`${LABEL}: msg.prioirty: unknown field; did you mean "priority"?`);
    expect(problem('{"period":60,"msg":{"dest":"q","param5":"x"}}')).toMatch(new RegExp(`^${LABEL}: msg\\.param5: unknown field; did you mean "param\\d"\\?$`));
  });

  it('reads .yaml only when written in JSON syntax', () => {
    expect(parseTimerConfig('{"period": 60, "msg": {"dest": "q"}}', 'timers/x.yaml')).toEqual({ period: 60, msg: { dest: 'q' } });
    expect(problem('period: 60\nmsg:\n  dest: q\n', 'timers/x.yaml')).toMatch(
      /^timers\/x\.yaml: YAML timer files are read only when written in JSON syntax \(rq has no YAML parser\)/,
    );
  });

  describe('loadTimerConfig', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-timer-config-'));
    });
    afterAll(() => fs.rm(dir, { recursive: true, force: true }));

    it('reads through a symlink and names the file on errors', async () => {
      const target = path.join(dir, 'timer.json');
      await fs.writeFile(target, '{"period": 86400, "msg": {"dest": "cleaner", "param1": "ALLQUEUES"}}');
      const link = path.join(dir, 'cleaner.json');
      await fs.symlink(target, link);
      expect(await loadTimerConfig(link)).toEqual({ period: 86400, msg: { dest: 'cleaner', param1: 'ALLQUEUES' } });
      await fs.writeFile(target, '{"period": 5, "msg": {"dest": "cleaner"}}');
      await expect(loadTimerConfig(link, {}, LABEL)).rejects.toThrow(`${LABEL}: period: expected a whole number of seconds >= 60, received 5`);
      await expect(loadTimerConfig(path.join(dir, 'gone.json'), {}, 'timers/gone.json')).rejects.toThrow('timers/gone.json: cannot read: no such file');
    });
  });
});
