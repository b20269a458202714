// Which root a program works on: --root, else RQ_ROOT, else the checkout; an empty RQ_ROOT is none given.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_DIR, resolveRoot } from '../../src/config/root.js';

describe('resolveRoot', () => {
  it('takes --root over RQ_ROOT over the checkout, each made absolute', () => {
    expect(resolveRoot('/srv/a', { RQ_ROOT: '/srv/b' })).toBe('/srv/a');
    expect(resolveRoot(undefined, { RQ_ROOT: '/srv/b' })).toBe('/srv/b');
    expect(resolveRoot(undefined, { RQ_ROOT: 'rel' })).toBe(path.resolve('rel'));
    expect(resolveRoot(undefined, {})).toBe(PACKAGE_DIR);
  });

  it('reads an empty RQ_ROOT (RQ_ROOT= rq queues) as no root given, not as the current directory', () => {
    expect(resolveRoot(undefined, { RQ_ROOT: '' })).toBe(PACKAGE_DIR);
  });
});
