// The tag index (rq-beyond §B9.3): journal before the change, replay after a restart, rebuild when missing, compaction, torn lines.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { TagIndex } from '../../../src/queue/tags/tag-index.js';
import { DirSync } from '../../../src/spool/durable.js';
import { openFilesUnder } from '../../helpers/open-files.js';

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
    expect(await lines()).toEqual([
      { id: 'x', add: ['t'], at: 5 },
      { id: 'y', add: ['t'], at: 7 },
      { id: 'y', add: ['u'], at: 7 },
    ]);
  });

  it('a rebuild replays the messages oldest tagging first, whatever order the scan lists them in', async () => {
    scanned = [
      { id: 'y', tags: ['t'], at: 7 },
      { id: 'z', tags: ['t'], at: 9 },
      { id: 'x', tags: ['t'], at: 5 },
    ];
    const ix = open();
    await ix.load();
    expect(ix.tagged('t')).toEqual(['z', 'y', 'x']);
    await ix.close();
  });

  it('a change with nothing to add or remove journals nothing', async () => {
    const ix = open();
    await ix.load();
    await ix.change('m1', ['a']);
    await ix.change('m1', [], []);
    await ix.close();
    expect(await lines()).toEqual([{ id: 'm1', add: ['a'], at: 1000 }]);
  });

  it('a message gone leaves every lookup at once, before its line is journalled', async () => {
    const ix = open();
    await ix.load();
    await ix.change('m1', ['a']);
    const journalled = ix.gone('m1');
    expect([ix.tagged('a'), ix.tagsOf('m1'), ix.has('a', 'm1')]).toEqual([[], [], false]);
    await journalled;
    await ix.close();
  });

  it('skips a line torn by a crash and keeps the rest', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, `${JSON.stringify({ id: 'a', add: ['t'], at: 1 })}\n{"id":"b","ad`);
    const ix = open();
    await ix.load();
    expect(ix.tagged('t')).toEqual(['a']);
    expect(ix.taggedAt('t', 'a')).toBe(1);
  });

  it('skips a line without an id, and reads a tagging time that is no number as 0', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, `${JSON.stringify({ add: ['t'], at: 1 })}\n${JSON.stringify({ id: 'a', add: ['t'], at: 'soon' })}\n`);
    const ix = open();
    await ix.load();
    expect(ix.tagged('t')).toEqual(['a']);
    expect(ix.taggedAt('t', 'a')).toBe(0);
  });

  it('rewrites the journal while it runs once it holds more than twice its live pairs plus 1000 lines', async () => {
    const ix = open();
    await ix.load();
    // Tag and untag one message over and over: no live pair, a growing journal.
    for (let i = 0; i < 500; i++) {
      await ix.change('m', ['t']);
      await ix.change('m', [], ['t']);
    }
    await ix.close();
    expect(await lines()).toHaveLength(1000);
    clock.t = 2000;
    await ix.change('m', ['keep']);
    await ix.close();
    // The 1,001st line crossed 2 × 0 + 1000: the journal is now its one live pair.
    expect(await lines()).toEqual([{ id: 'm', add: ['keep'], at: 2000 }]);
    const reopened = open();
    await reopened.load();
    expect(reopened.counts()).toEqual({ keep: 1 });
  });

  it('answers for a tag or a message it has never seen: nothing, without a lookup failing', async () => {
    const ix = open();
    await ix.load();
    await ix.change('m1', ['a', 'b']);
    await ix.change('m1', [], ['a']);
    expect([ix.tagsOf('m1'), ix.tagsOf('nope')]).toEqual([['b'], []]);
    expect([ix.tagged('never'), ix.taggedAt('never', 'm1'), ix.has('never', 'm1'), ix.has('b', 'm1'), ix.has('b', 'nope')]).toEqual([
      [],
      0,
      false,
      true,
      false,
    ]);
    // Removing a tag the index lacks (its line lost with a journal cut by hand) journals the removal and changes nothing.
    await ix.change('m1', [], ['never']);
    expect(ix.tagsOf('m1')).toEqual(['b']);
    // A message whose last tag was removed is no longer in the index: its removal from the queue journals nothing.
    await ix.change('m1', [], ['b']);
    await ix.gone('m1');
    await ix.close();
    expect((await lines()).filter((l) => l.gone)).toEqual([]);
  });

  it('makes its directory again when it was removed after the load', async () => {
    const ix = open();
    await ix.load();
    await fs.rm(path.dirname(file), { recursive: true });
    await ix.change('m1', ['a']);
    await ix.close();
    expect(await lines()).toEqual([{ id: 'm1', add: ['a'], at: 1000 }]);
  });

  it('lets go of its journal when closed', async () => {
    const ix = open();
    await ix.load();
    await ix.change('m1', ['a']);
    await ix.close();
    expect(openFilesUnder(file)).toEqual([]);
  });

  it('at load, rewrites a journal past twice its live pairs plus 1000 lines, and leaves one at that bound as it is', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const line = (l: object) => `${JSON.stringify(l)}\n`;
    // One message tagged and untagged over and over, then two live pairs: 1004 lines, 2 × 2 + 1000.
    const churn = Array.from({ length: 501 }, () => line({ id: 'm', add: ['t'], at: 1 }) + line({ id: 'm', remove: ['t'] })).join('');
    const atBound = churn + line({ id: 'k', add: ['keep'], at: 2 }) + line({ id: 'k', add: ['also'], at: 3 });
    await fs.writeFile(file, atBound);
    const first = open();
    await first.load();
    await first.close();
    expect(await fs.readFile(file, 'utf8')).toBe(atBound);
    // One line more: rewritten to the live pairs.
    await fs.writeFile(file, atBound + line({ id: 'm', gone: true }));
    const second = open();
    await second.load();
    await second.close();
    expect(await lines()).toEqual([
      { id: 'k', add: ['keep'], at: 2 },
      { id: 'k', add: ['also'], at: 3 },
    ]);
    expect(scans).toBe(0);
  });

  it('counts the most used tags first, then by name', async () => {
    const ix = open();
    await ix.load();
    await ix.change('m1', ['d', 'c', 'a']);
    await ix.change('m2', ['c', 'b']);
    await ix.change('m3', ['b', 'e']);
    expect(Object.entries(ix.counts())).toEqual([
      ['b', 2],
      ['c', 2],
      ['a', 1],
      ['d', 1],
      ['e', 1],
    ]);
    await ix.close();
  });

  it('refuses a journal it cannot read, rather than rebuilding over it', async () => {
    await fs.mkdir(file, { recursive: true });
    await expect(open().load()).rejects.toMatchObject({ code: 'EISDIR' });
    expect(scans).toBe(0);
  });
});
