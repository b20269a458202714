// The tag index (rq-beyond §B9.3): journal before the change, replay after a restart, rebuild when missing, compaction, torn lines.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { TagIndex } from '../../../src/queue/tags/tag-index.js';
import { DirSync } from '../../../src/spool/durable.js';

let dir: string;
let file: string;
const clock = { t: 1000 };
let scanned: { id: string; tags: string[]; at: number }[];
let scans = 0;

function open(): TagIndex {
  return new TagIndex({ file, dirSync: new DirSync(), now: () => clock.t, scan: async () => (scans++, scanned), log: silentLogger() });
}

const lines = async () =>
  (await fs.readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-tags-'));
  file = path.join(dir, '.index', 'tags.jsonl');
  clock.t = 1000;
  scanned = [];
  scans = 0;
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

describe('TagIndex', () => {
  it('journals each change before it counts, and a reopened index replays it: newest tagging first', async () => {
    const ix = open();
    await ix.load();
    await ix.change('m1', ['a', 'b']);
    clock.t = 2000;
    await ix.change('m2', ['a']);
    clock.t = 3000;
    await ix.change('m1', ['a'], ['b']); // re-adding keeps the first tagging time
    expect(ix.tagged('a')).toEqual(['m2', 'm1']);
    expect([ix.taggedAt('a', 'm2'), ix.taggedAt('a', 'm1'), ix.taggedAt('a', 'nope')]).toEqual([2000, 1000, 0]);
    expect(ix.counts()).toEqual({ a: 2 });
    await ix.gone('m2');
    await ix.gone('nope'); // untagged: nothing to journal
    await ix.close();
    expect(await lines()).toEqual([
      { id: 'm1', add: ['a', 'b'], at: 1000 },
      { id: 'm2', add: ['a'], at: 2000 },
      { id: 'm1', add: ['a'], remove: ['b'], at: 3000 },
      { id: 'm2', gone: true },
    ]);
    scans = 0;
    const again = open();
    await again.load();
    expect(again.tagged('a')).toEqual(['m1']);
    expect(again.taggedAt('a', 'm1')).toBe(1000);
    expect(again.counts()).toEqual({ a: 1 });
    expect(scans).toBe(0);
  });

  it('a missing journal is rebuilt from the messages themselves', async () => {
    scanned = [
      { id: 'x', tags: ['t'], at: 5 },
      { id: 'y', tags: ['t', 'u'], at: 7 },
    ];
    const ix = open();
    await ix.load();
    expect(scans).toBe(1);
    expect(ix.tagged('t')).toEqual(['y', 'x']);
    expect(ix.counts()).toEqual({ t: 2, u: 1 });
    await ix.close();
    expect(await lines()).toHaveLength(3);
  });

  it('skips a line torn by a crash and keeps the rest', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, `${JSON.stringify({ id: 'a', add: ['t'], at: 1 })}\n{"id":"b","ad`);
    const ix = open();
    await ix.load();
    expect(ix.tagged('t')).toEqual(['a']);
    expect(ix.taggedAt('t', 'a')).toBe(1);
  });

  it('rewrites the journal once it holds far more lines than live pairs', async () => {
    const ix = open();
    await ix.load();
    // Tag and untag one message over and over: one live pair, a growing journal.
    for (let i = 0; i < 600; i++) {
      await ix.change('m', ['t']);
      await ix.change('m', [], ['t']);
    }
    await ix.change('m', ['keep']);
    await ix.close();
    const after = await lines();
    expect(after.length).toBeLessThan(1000);
    const reopened = open();
    await reopened.load();
    expect(reopened.counts()).toEqual({ keep: 1 });
  });
});
