// Which keys of a create are refused as misspelt fields (with the field meant) and which are taken or dropped as the classic daemon dropped them.
import { describe, expect, it } from 'vitest';
import { CLASSIC_CREATE_FIELDS, CREATE_FIELDS, DROPPED_FIELDS, refuseMisspeltFields } from '../../src/message/create-fields.js';
import { closest, distance } from '../../src/message/nearest-name.js';

const refusal = (fields: Record<string, unknown>): string | null => {
  try {
    refuseMisspeltFields(fields);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

describe('refuseMisspeltFields', () => {
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

  it('a key far from every field is left for the create to drop, as the classic daemon dropped it', () => {
    for (const key of ['customer', 'job', 'x', 'payload', 'callback_url', 'note', 'owner']) expect(refusal({ dest: 'q', [key]: 1 }), key).toBeNull();
  });
});

describe('closest', () => {
  it('counts a swap of neighbours as one edit and ignores case', () => {
    expect(distance('prioirty', 'priority')).toBe(1);
    expect(closest('LIMIT', ['limit', 'tags'])).toBe('limit');
    expect(closest('zzzz', ['limit', 'tags'])).toBeUndefined();
  });
});
