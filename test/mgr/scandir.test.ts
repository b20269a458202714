// scandir/ passes against a stand-in supervisor: each entry that cannot become a queue is logged once with its reason, not on every rescan.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { queueNameRoom } from '../../src/config/socket-paths.js';
import { ScanDir } from '../../src/mgr/scandir.js';
import type { Supervisor } from '../../src/mgr/supervisor.js';
import { type LogLine, capturedLog } from '../helpers/captured-log.js';

let root: string;
let scandir: string;
let lines: LogLine[];
let created: string[];
let scan: ScanDir;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-scan-'));
  scandir = path.join(root, 'scandir');
  await fs.mkdir(scandir);
  await fs.mkdir(path.join(root, 'queues'));
  created = [];
  const captured = capturedLog();
  lines = captured.lines;
  const log = captured.log;
  // Only what a pass that creates queues asks of its supervisor.
  const sup = {
    root,
    workers: new Map(),
    createQueue: async (config: { name: string }) => {
      created.push(config.name);
      await fs.mkdir(path.join(root, 'queues', config.name));
      return ['success', 'queue created - awesome'];
    },
  } as unknown as Supervisor;
  scan = new ScanDir(sup, log);
});
afterEach(async () => {
  await scan.close();
  await fs.rm(root, { recursive: true, force: true });
});

async function app(mode = 0o755): Promise<string> {
  const dir = await fs.mkdtemp(path.join(root, 'app-'));
  await fs.writeFile(path.join(dir, 'run'), '#!/bin/sh\n');
  await fs.chmod(path.join(dir, 'run'), mode);
  return dir;
}
const link = async (name: string, target: string) => fs.symlink(target, path.join(scandir, name));
const refusals = () => lines.filter((l) => l.msg === 'scandir entry cannot become a queue');

describe('ScanDir refusals', () => {
  it('logs each entry that cannot become a queue once, at warn, with its reason; three rescans add nothing', async () => {
    const max = queueNameRoom(root).maxBytes;
    await fs.writeFile(path.join(scandir, '.gitkeep'), '');
    const names = ['with\nnewline', 'x'.repeat(250), '.dotted', 'dangling', 'noexec', 'y'.repeat(max + 1)];
    await link(names[0], await app());
    await link(names[1], await app());
    await link(names[2], await app());
    await link(names[3], path.join(root, 'nowhere'));
    await link(names[4], await app(0o644));
    await link(names[5], await app());
    await link('y'.repeat(max), await app());

    for (let i = 0; i < 3; i++) await scan.kick();
    const told = refusals();
    expect(told.map((l) => l.entry).sort()).toEqual([...names].sort());
    expect(told.every((l) => l.level === 40 && typeof l.reason === 'string' && l.reason.length > 0)).toBe(true);
    expect(told.find((l) => l.entry === names[5])?.reason).toBe(
      `queue name: expected at most ${max} characters for this root (socket path queues/<q>/events.sock must fit in 107 bytes), received ${max + 1} characters`,
    );
    expect(told.find((l) => l.entry === 'noexec')?.reason).toMatch(/run is not executable/);
    // The name exactly at the limit is the one queue made.
    expect(created).toEqual(['y'.repeat(max)]);
  });

  it('tells again when the reason changes, and after an entry was fixed and went wrong again', async () => {
    await link('later', path.join(root, 'later-dir'));
    await scan.kick();
    expect(refusals().map((l) => l.reason)).toEqual([expect.stringMatching(/^dangling link: scandir\/later points to .*later-dir/)]);

    // Now a directory, but no run in it: a new reason.
    await fs.mkdir(path.join(root, 'later-dir'));
    await scan.kick();
    await scan.kick();
    expect(refusals().map((l) => l.reason)).toEqual([
      expect.stringMatching(/^dangling link/),
      expect.stringMatching(/^no usable run in .*later-dir \(ENOENT\)$/),
    ]);

    await fs.writeFile(path.join(root, 'later-dir', 'run'), '#!/bin/sh\n', { mode: 0o755 });
    await fs.chmod(path.join(root, 'later-dir', 'run'), 0o755);
    await scan.kick();
    expect(created).toEqual(['later']);
    expect(refusals()).toHaveLength(2);

    await fs.chmod(path.join(root, 'later-dir', 'run'), 0o644);
    await scan.kick();
    await scan.kick();
    expect(refusals()).toHaveLength(3);
    expect(refusals()[2]).toMatchObject({ reason: 'scandir/later/run is not executable', fix: expect.stringMatching(/^chmod \+x .*later-dir\/run$/) });
    // What rq-mgr answers refused_queues with: the same entries, each with its reason and fix.
    expect(scan.refusals()).toContainEqual({
      entry: 'later',
      reason: 'scandir/later/run is not executable',
      fix: expect.stringMatching(/^chmod \+x .*later-dir\/run$/),
    });
  });

  it('a bad config.json is logged once too, at error, and its queue is not made', async () => {
    const dir = await app();
    await fs.writeFile(path.join(dir, 'config.json'), '{ broken');
    await link('conf', dir);
    for (let i = 0; i < 3; i++) await scan.kick();
    const bad = lines.filter((l) => l.msg === 'bad config.json in scandir link; queue not made');
    expect(bad).toHaveLength(1);
    // No queue to keep a last config: the fix says the queue comes once the file is right.
    expect(bad[0]).toMatchObject({ level: 50, queue: 'conf', fix: expect.stringMatching(/config\.json .*; the queue is made once it is$/) });
    expect(created).toEqual([]);
  });

  it('a bad config.json of a queue made before: logged as the queue left as it was, on its last config', async () => {
    const dir = await app();
    await fs.writeFile(path.join(dir, 'config.json'), '{"memory_max":"512X"}');
    await fs.mkdir(path.join(root, 'queues', 'conf'));
    await link('conf', dir);
    await scan.kick();
    const bad = lines.filter((l) => l.msg.startsWith('bad config.json'));
    expect(bad).toEqual([
      expect.objectContaining({
        msg: 'bad config.json in scandir link; queue left as it was',
        reason: expect.stringMatching(/memory_max: expected bytes, at least 1M: .*received "512X"$/),
        fix: expect.stringMatching(/; the queue keeps its last config meanwhile$/),
      }),
    ]);
  });
});
