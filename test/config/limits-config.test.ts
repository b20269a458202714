// config/limits.json read into its table: exact keys and globs (every other character literal, newlines too), the refusals naming the key, and an absent file.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredConcurrency, loadLimits, parseLimits } from '../../src/config/limits-config.js';

describe('parseLimits', () => {
  it('refuses anything but a JSON object', () => {
    for (const raw of [null, [], 'x', 3, undefined])
      expect(() => parseLimits(raw), String(raw)).toThrow(/config\/limits\.json: .*a JSON object of key: concurrency/);
  });

  it('names the key at fault', () => {
    expect(() => parseLimits({ 'api:*': 0 })).toThrow(/config\/limits\.json: "api:\*"/);
    expect(() => parseLimits({ '': 2 })).toThrow(/config\/limits\.json: ""/);
  });

  it('a key with * is a glob; every other character is literal, a newline too', () => {
    const t = parseLimits({ 'api.v1:*': 2, 'a+b(c)[d]{e}?^$|\\': 3, 'x*y': 4, plain: 5 });
    expect(t.exact).toEqual(
      new Map([
        ['a+b(c)[d]{e}?^$|\\', 3],
        ['plain', 5],
      ]),
    );
    expect(t.globs.map((g) => g.pattern)).toEqual(['api.v1:*', 'x*y']);
    expect(configuredConcurrency(t, 'api.v1:one')).toBe(2);
    expect(configuredConcurrency(t, 'apiXv1:one')).toBeUndefined();
    expect(configuredConcurrency(t, 'x\ny')).toBe(4);
    expect(configuredConcurrency(t, 'x-y-z')).toBeUndefined();
    expect(configuredConcurrency(t, 'a+b(c)[d]{e}?^$|\\')).toBe(3);
    expect(configuredConcurrency(t, 'plain')).toBe(5);
    expect(configuredConcurrency(t, 'plainer')).toBeUndefined();
  });
});

describe('loadLimits', () => {
  it('an absent file is the empty table; another read error and bad JSON are refused', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-limits-'));
    try {
      const empty = await loadLimits(path.join(dir, 'limits.json'));
      expect([empty.exact.size, empty.globs.length]).toEqual([0, 0]);
      await expect(loadLimits(dir)).rejects.toMatchObject({ code: 'RQ_ERR_CONFIG' });
      await fs.writeFile(path.join(dir, 'limits.json'), '{"k": 2, "g*": 1}');
      const t = await loadLimits(path.join(dir, 'limits.json'));
      expect([t.exact.get('k'), t.globs[0].pattern]).toEqual([2, 'g*']);
      await fs.writeFile(path.join(dir, 'limits.json'), '{');
      await expect(loadLimits(path.join(dir, 'limits.json'))).rejects.toMatchObject({ code: 'RQ_ERR_CONFIG' });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
