// Which root a program works on: --root, else RQ_ROOT, else the checkout; an empty RQ_ROOT is none given.
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { PACKAGE_DIR, resolveRoot } from '../../src/config/root.js';

describe('resolveRoot', () => {
  it('takes --root over RQ_ROOT over the checkout, each made absolute', () => {
    expect(resolveRoot('/srv/a', { RQ_ROOT: '/srv/b' })).toBe('/srv/a');
    expect(resolveRoot(undefined, { RQ_ROOT: '/srv/b' })).toBe('/srv/b');
    expect(resolveRoot(undefined, { RQ_ROOT: 'rel' })).toBe(path.resolve('rel'));
    expect(resolveRoot(undefined, {})).toBe(PACKAGE_DIR);
  });

  it('reads an empty RQ_ROOT (RQ_ROOT= rq queues) as no root given, not as the current directory', () => {
    // Tests run in the checkout, which is PACKAGE_DIR: from elsewhere, "" would resolve to that elsewhere.
    const cwd = vi.spyOn(process, 'cwd').mockReturnValue(os.tmpdir());
    try {
      expect(path.resolve('')).toBe(os.tmpdir());
      expect(resolveRoot(undefined, { RQ_ROOT: '' })).toBe(PACKAGE_DIR);
    } finally {
      cwd.mockRestore();
    }
  });
});
