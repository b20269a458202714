// Which keys of a create are refused as misspelt fields (with the field meant) and which are taken or dropped as the classic daemon dropped them.
import { describe, expect, it } from 'vitest';
import {
  CLASSIC_CREATE_FIELDS,
  CREATE_FIELDS,
  DROPPED_FIELDS,
  MAX_FIELDS,
  QUEUE_ONLY_SETTINGS,
  refuseFieldNames,
  typoBudget,
} from '../../src/message/create-fields.js';
import { budget } from '../helpers/time-budget.js';
import { closest, distance } from '../../src/message/nearest-name.js';

const refusal = (fields: Record<string, unknown>): string | null => {
  try {
    refuseFieldNames(fields);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

describe('refuseFieldNames', () => {
  it.each([
    ['prioirty', 'priority'],
    ['priorty', 'priority'],
    ['Param1', 'param1'],
    ['parma2', 'param2'],
    ['tgas', 'tags'],
    ['tag', 'tags'],
    ['max_retires', 'max_retries'],
    ['maxcount', 'max_count'],
    ['heartbeat_timout', 'heartbeat_timeout'],
    ['dependss', 'depends'],
    ['post_run_webhooks', 'post_run_webhook'],
  ])('%s is refused, naming %s', (key, meant) => {
    expect(refusal({ dest: 'q', [key]: 1 })).toBe(`${key}: unknown field; did you mean "${meant}"?`);
  });

  it('every field a create takes, and every key classic clients send beside them, passes', () => {
    expect(refusal(Object.fromEntries([...CREATE_FIELDS, ...DROPPED_FIELDS].map((k) => [k, 'x'])))).toBeNull();
    expect(CLASSIC_CREATE_FIELDS.every((f) => CREATE_FIELDS.includes(f))).toBe(true);
    for (const k of ['_method', 'relay_id', 'relay_ok', 'msg_id', 'status', 'state', 'path', '_attachments', 'cloned_from', 'dups', 'dup'])
      expect(DROPPED_FIELDS, k).toContain(k);
  });

  it.each(QUEUE_ONLY_SETTINGS)("%s, a queue's own setting, is refused as one: a message cannot set it", (key) => {
    expect(refusal({ dest: 'q', [key]: 4096 })).toBe(`${key}: a setting of the queue, not of a message: set it in the queue's config.json`);
  });

  it('a key far from every field is left for the create to drop, as the classic daemon dropped it', () => {
    for (const key of ['customer', 'job', 'x', 'payload', 'callback_url', 'note', 'owner']) expect(refusal({ dest: 'q', [key]: 1 }), key).toBeNull();
  });
});

describe('a body full of unknown keys', () => {
  const farKeys = (n: number, from = 0) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${from + i}`, 1]));

  it('more than 1,000 keys are refused, naming how many came; 1,000 pass', () => {
    expect(refusal({ dest: 'q', ...farKeys(999) })).toBeNull();
    expect(refusal({ dest: 'q', ...farKeys(1000) })).toBe(`message: expected an object of at most ${MAX_FIELDS} fields, received 1001 fields`);
  });

  it('the unknown keys of a batch are looked at for misspellings up to 1,000 in all; any beyond are dropped unexamined', () => {
    expect(refusal({ dest: 'q', ...farKeys(998), prioirty: 1 })).toMatch(/^prioirty: unknown field/);
    const batch = typoBudget();
    refuseFieldNames({ dest: 'q', ...farKeys(600) }, '', batch);
    expect(() => refuseFieldNames({ dest: 'q', ...farKeys(399, 600), prioirty: 1 }, '', batch)).toThrow(/prioirty/);
    expect(() => refuseFieldNames({ dest: 'q', prioirty: 1 }, '', batch)).not.toThrow();
  });

  it('200,000 keys, or one of two million characters, take a fraction of a second, not a quarter of a minute', () => {
    const t0 = performance.now();
    expect(refusal({ dest: 'q', ...farKeys(200_000) })).toMatch(/^message: /);
    expect(refusal({ dest: 'q', ['x'.repeat(2_000_000)]: 1 })).toBeNull();
    expect(performance.now() - t0).toBeLessThan(budget(3000));
  });
});

describe('closest', () => {
  it('counts a swap of neighbours as one edit and ignores case', () => {
    expect(distance('prioirty', 'priority')).toBe(1);
    expect(closest('LIMIT', ['limit', 'tags'])).toBe('limit');
    expect(closest('zzzz', ['limit', 'tags'])).toBeUndefined();
  });
});
