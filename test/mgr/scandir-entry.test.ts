// What one scandir/ entry is: a queue, the reason it cannot be one, or nothing meant as a queue.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { queueNameRoom } from '../../src/config/socket-paths.js';
import { inspectEntry } from '../../src/mgr/scandir-entry.js';

let root: string;
let scandir: string;
beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-entry-'));
  scandir = path.join(root, 'scandir');
  await fs.mkdir(scandir);
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** A directory with a run of `mode`, linked into scandir/ as `name`. */
async function linked(name: string, mode = 0o755): Promise<string> {
  const dir = await fs.mkdtemp(path.join(root, 'app-'));
  await fs.writeFile(path.join(dir, 'run'), '#!/bin/sh\necho "done ok" >&3\n', { mode });
  await fs.chmod(path.join(dir, 'run'), mode);
  await fs.symlink(dir, path.join(scandir, name));
  return dir;
}

const inspect = (name: string) => inspectEntry(scandir, name, queueNameRoom(root));

describe('inspectEntry', () => {
  it('a link to a directory with an executable run is a queue', async () => {
    const dir = await linked('app');
    expect(await inspect('app')).toEqual({ kind: 'queue', name: 'app', target: dir, run: path.join(dir, 'run') });
  });

  it("a bad name's fix gives the bound of this root: the name rule's 128, or less where the root's path leaves its sockets less room", async () => {
    await linked('bad name');
    const refused = await inspect('bad name');
    expect(refused).toMatchObject({
      kind: 'refused',
      fix: `link the directory under a name of letters, digits, - and _, at most ${Math.min(128, queueNameRoom(root).maxBytes)} characters`,
    });
    const deep = path.join(root, 'd'.repeat(60), 'e'.repeat(40));
    await fs.mkdir(path.join(deep, 'scandir'), { recursive: true });
    const room = queueNameRoom(deep).maxBytes;
    expect(room).toBeLessThan(128);
    const dir = await fs.mkdtemp(path.join(root, 'app-'));
    await fs.symlink(dir, path.join(deep, 'scandir', 'bad name'));
    expect(await inspectEntry(path.join(deep, 'scandir'), 'bad name', queueNameRoom(deep))).toMatchObject({
      kind: 'refused',
      fix: `link the directory under a name of letters, digits, - and _, at most ${room} characters`,
    });
  });

  it('names each reason an entry cannot become a queue', async () => {
    const max = queueNameRoom(root).maxBytes;
    const cases: Array<[string, () => Promise<unknown>, RegExp]> = [
      ['bad\nname', () => linked('bad\nname'), /^queue name: expected letters, digits, '-' or '_' .*received "bad\\nname"$/],
      ['x'.repeat(250), () => linked('x'.repeat(250)), /^queue name: expected at most 128 characters, received 250$/],
      ['.hidden', () => linked('.hidden'), /^queue name: expected letters, digits.*received "\.hidden"$/],
      [
        'a'.repeat(max + 1),
        () => linked('a'.repeat(max + 1)),
        new RegExp(
          `^queue name: expected at most ${max} characters for this root \\(socket path queues/<q>/events\\.sock must fit in 107 bytes\\), received ${max + 1} characters$`,
        ),
      ],
      [
        'dangling',
        () => fs.symlink(path.join(root, 'gone'), path.join(scandir, 'dangling')),
        /^dangling link: scandir\/dangling points to .*\/gone, which cannot be reached \(ENOENT\)$/,
      ],
      ['noexec', () => linked('noexec', 0o644), /^scandir\/noexec\/run is not executable$/],
      ['norun', async () => fs.symlink(await fs.mkdtemp(path.join(root, 'empty-')), path.join(scandir, 'norun')), /^no usable run in .*\(ENOENT\)$/],
      [
        'file',
        async () => fs.symlink(path.join(root, 'plain'), path.join(scandir, 'file'), 'file').then(() => fs.writeFile(path.join(root, 'plain'), '')),
        /^scandir\/file links to .*\/plain, which is not a directory$/,
      ],
      ['copied', () => fs.mkdir(path.join(scandir, 'copied')), /^scandir\/copied is not a symbolic link/],
    ];
    for (const [name, make, reason] of cases) {
      await make();
      const entry = await inspect(name);
      expect(entry.kind, name).toBe('refused');
      expect((entry as { reason: string }).reason, name).toMatch(reason);
      // Each reason comes with what to do about it.
      expect((entry as { fix: string }).fix, name).toMatch(/\S/);
    }
  });

  it('the fix of a run without its execute bit is the chmod of its real path', async () => {
    const dir = await linked('noexec', 0o644);
    expect(await inspect('noexec')).toEqual({
      kind: 'refused',
      name: 'noexec',
      reason: 'scandir/noexec/run is not executable',
      fix: `chmod +x ${path.join(dir, 'run')}`,
    });
  });

  it('a name exactly at the limit for this root is a queue; one more character is refused', async () => {
    const max = queueNameRoom(root).maxBytes;
    await linked('q'.repeat(max));
    await linked('q'.repeat(max + 1));
    expect((await inspect('q'.repeat(max))).kind).toBe('queue');
    expect((await inspect('q'.repeat(max + 1))).kind).toBe('refused');
  });

  it('a run that is a directory is refused', async () => {
    const dir = await fs.mkdtemp(path.join(root, 'app-'));
    await fs.mkdir(path.join(dir, 'run'));
    await fs.symlink(dir, path.join(scandir, 'dirrun'));
    expect(await inspect('dirrun')).toEqual({
      kind: 'refused',
      name: 'dirrun',
      reason: `${path.join(dir, 'run')} is not a file`,
      fix: `make ${path.join(dir, 'run')} an executable file`,
    });
  });

  it("the root's own dot-files and entries gone meanwhile are nothing to report", async () => {
    await fs.writeFile(path.join(scandir, '.gitkeep'), '');
    expect(await inspect('.gitkeep')).toEqual({ kind: 'ignored', name: '.gitkeep' });
    expect(await inspect('vanished')).toEqual({ kind: 'ignored', name: 'vanished' });
  });
});
