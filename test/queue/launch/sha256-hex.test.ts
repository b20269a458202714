// The run cgroups' hash in plain JavaScript gives node:crypto's sha256, so a queue's parent cgroup keeps its name across versions.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../src/queue/launch/sha256-hex.js';

describe('sha256Hex', () => {
  it('is the FIPS 180-4 digest of the empty string and of "abc"', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  // Lengths around the padding's edges (55, 56, 63, 64 bytes), several blocks, and characters beyond ASCII.
  const texts = [...[1, 55, 56, 57, 63, 64, 65, 119, 120, 1000].map((n) => 'x'.repeat(n)), '/var/spool/rq/queue/q é → 你', '/root/rq/queue/a'];
  it.each(texts)('equals node:crypto for %j', (text) => {
    expect(sha256Hex(text)).toBe(crypto.createHash('sha256').update(text).digest('hex'));
  });
});
