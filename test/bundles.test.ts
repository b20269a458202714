// The daemon bundles tools/bundle-daemons.mjs writes are pure ASCII: V8 keeps each source text for the process's
// life, and one character outside Latin-1 makes it two-byte (0.6 MB more per queue process, bench/rss.ts).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT } from './helpers/rq-root.js';

const BUNDLES = ['dist/queue/queue-main.js', 'dist/timers/timers-main.js', 'dist/cli/rq-mgr.js'];

describe('daemon bundles', () => {
  it.each(BUNDLES)('%s holds no character outside ASCII', (file) => {
    const text = fs.readFileSync(path.join(PROJECT, file), 'utf8');
    const found = /[^\x00-\x7f]/.exec(text);
    expect(found && { char: found[0], at: text.slice(Math.max(0, found.index - 60), found.index + 20) }).toBeNull();
  });
});
