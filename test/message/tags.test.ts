// Tag input rules (rq-beyond §B9.1, §B1.12): both input shapes, every refusal text, order and duplicates.
import { describe, expect, it } from 'vitest';
import { invalidField } from '../../src/errors.js';
import { MAX_TAGS, isTag, readTags } from '../../src/message/tags.js';

const read = (raw: unknown) => readTags(raw, invalidField);
const refusal = (raw: unknown) => {
  try {
    read(raw);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('readTags', () => {
  it('takes an array or a comma-separated string, drops duplicates, keeps order', () => {
    expect(read(['b', 'a', 'b'])).toEqual(['b', 'a']);
    expect(read('b, a,b,')).toEqual(['b', 'a']);
    expect(read('')).toEqual([]);
    expect(read([])).toEqual([]);
    expect(read(['A9._:@+-z', 'x'.repeat(64)])).toEqual(['A9._:@+-z', 'x'.repeat(64)]);
  });

  it('refuses other shapes, bad tags (naming their index) and more than 32, with the §B1.12 texts', () => {
    expect(refusal(42)).toBe('tags: expected an array of tags or a comma-separated string, received 42');
    expect(refusal({})).toBe('tags: expected an array of tags or a comma-separated string, received {}');
    const TAG = 'a tag of 1-64 characters from A-Z a-z 0-9 . _ : @ + - (starting with a letter or digit)';
    expect(refusal(['ok', 'a b'])).toBe(`tags[1]: expected ${TAG}, received "a b"`);
    for (const bad of ['', '-x', '.x', 'a/b', 'x'.repeat(65), 'é', 'a\u0000'])
      expect(refusal([bad])).toBe(`tags[0]: expected ${TAG}, received ${JSON.stringify(bad)}`);
    expect(refusal([7])).toBe(`tags[0]: expected ${TAG}, received 7`);
    expect(refusal(Array.from({ length: 40 }, (_, i) => `t${i}`))).toBe('tags: expected at most 32 tags, received 40');
    // Duplicates do not count against the limit.
    expect(read([...Array.from({ length: MAX_TAGS }, (_, i) => `t${i}`), 't0'])).toHaveLength(MAX_TAGS);
  });

  it('isTag agrees with the rule', () => {
    expect(['a', 'Z', '0', 'a.b', 'user@host', 'k:v', 'a+b'].every(isTag)).toBe(true);
    expect([undefined, null, 1, '', ' a', 'a,b', 'a b', '_a'].some(isTag)).toBe(false);
  });
});
