// A queue made over HTTP keeps its script as given (relative to the root) and is held to script_dirs at every start: a link swapped outside them afterwards is a SCRIPTERROR with the reason, not a run.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { SCRIPT_DIRS_MARKER } from '../../src/config/script-dirs.js';
import { QueueClient } from '../../src/ipc/queue-client.js';
import { VERBS_SH, waitFor } from '../helpers/rq-root.js';
import { type WebRoot, postForm, send, startWebRoot, stateOf, waitState } from './web-root.js';

let w: WebRoot;
let B: string;
const EVIL = '#!/bin/bash\ntouch "$(dirname "$0")/ran"\necho "done evil" >&3\n';

beforeAll(async () => {
  w = await startWebRoot({
    config: { allow_new_queue: true, script_dirs: ['defs'] },
    setup: async (root) => {
      // defs/job.sh -> defs/v1.sh (inside script_dirs); outside/evil.sh is no script an HTTP queue may run.
      await fs.mkdir(path.join(root, 'defs'));
      await fs.mkdir(path.join(root, 'outside'));
      await fs.copyFile(VERBS_SH, path.join(root, 'defs', 'v1.sh'));
      await fs.chmod(path.join(root, 'defs', 'v1.sh'), 0o755);
      await fs.symlink('v1.sh', path.join(root, 'defs', 'job.sh'));
      await fs.writeFile(path.join(root, 'outside', 'evil.sh'), EVIL, { mode: 0o755 });
      await fs.writeFile(path.join(root, 'defs', 'linked.json'), JSON.stringify({ name: 'linked', script: './defs/job.sh', num_workers: 1 }));
    },
    queues: {},
  });
  B = w.base;
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

/** Points defs/job.sh at `target` (relative to defs/), as a deploy swaps a link: a new link renamed over the old. */
async function pointJobAt(target: string): Promise<void> {
  const tmp = path.join(w.root, 'defs', 'job.sh.new');
  await fs.symlink(target, tmp);
  await fs.rename(tmp, path.join(w.root, 'defs', 'job.sh'));
}

async function heldFor(queue: string): Promise<{ status: string; reason?: string }> {
  const client = QueueClient.oneShot(queuePaths(w.root, queue).sock, { timeoutMs: 5000 });
  return waitFor(async () => {
    const d = await client.statusDetail();
    return d.ok && d.value.status === 'SCRIPTERROR' ? d.value : false;
  }, `${queue} in SCRIPTERROR`);
}

describe('a queue made over HTTP and its script', () => {
  it('/new_queue keeps ./defs/job.sh as given; a start after the link is swapped out of script_dirs is refused with the reason, and runs again once it points back', async () => {
    const made = await postForm(`${B}/new_queue`, {
      'queue[name]': 'made',
      'queue[script]': './defs/job.sh',
      'queue[num_workers]': '1',
      'queue[exec_prefix]': '',
    });
    expect(made.status).toBe(303);
    const file = JSON.parse(await fs.readFile(queuePaths(w.root, 'made').configFile, 'utf8')) as Record<string, unknown>;
    expect(file.script).toBe('./defs/job.sh');
    expect(file.script_dirs_only).toBeUndefined();
    expect(((await (await fetch(`${B}/q/made/config`)).json()) as Record<string, unknown>).script).toBe('./defs/job.sh');
    await fs.access(path.join(queuePaths(w.root, 'made').dir, SCRIPT_DIRS_MARKER));
    const first = await send(B, 'made', { param1: 'done' });
    await waitState(B, 'made', first, ['done']);

    await pointJobAt('../outside/evil.sh');
    const held = await send(B, 'made', { param1: 'done' });
    const detail = await heldFor('made');
    expect(detail.reason).toBe(
      `script "./defs/job.sh" resolves to ${await fs.realpath(path.join(w.root, 'outside', 'evil.sh'))}, outside script_dirs: a queue made over HTTP runs only a file inside script_dirs (defs)`,
    );
    expect(await stateOf(B, 'made', held)).toBe('que');
    await expect(fs.access(path.join(w.root, 'outside', 'ran'))).rejects.toThrow(/ENOENT/);

    // Pointed back inside: the watch on defs/ clears SCRIPTERROR and the held message runs.
    await pointJobAt('v1.sh');
    await waitState(B, 'made', held, ['done']);
    await expect(fs.access(path.join(w.root, 'outside', 'ran'))).rejects.toThrow(/ENOENT/);
  });

  it('/new_queue_link: the linked file keeps its relative script, and the queue is held to script_dirs the same way', async () => {
    const made = await postForm(`${B}/new_queue_link`, { 'queue[json_path]': 'defs/linked.json' });
    expect(made.status).toBe(303);
    expect(((await (await fetch(`${B}/q/linked/config`)).json()) as Record<string, unknown>).script).toBe('./defs/job.sh');
    await fs.access(path.join(queuePaths(w.root, 'linked').dir, SCRIPT_DIRS_MARKER));
    await pointJobAt('../outside/evil.sh');
    try {
      const held = await send(B, 'linked', { param1: 'done' });
      expect((await heldFor('linked')).reason).toMatch(/^script "\.\/defs\/job\.sh" resolves to .*\/outside\/evil\.sh, outside script_dirs/);
      expect(await stateOf(B, 'linked', held)).toBe('que');
    } finally {
      await pointJobAt('v1.sh');
    }
    await expect(fs.access(path.join(w.root, 'outside', 'ran'))).rejects.toThrow(/ENOENT/);
  });

  it('a queue not made over HTTP (scandir, rq-install, a local create_queue) is not held to script_dirs', async () => {
    const r = await w.mgr.cmd(
      'create_queue',
      JSON.stringify({ name: 'local', script: path.join(w.root, 'outside', 'evil.sh'), num_workers: 1, exec_prefix: '' }),
    );
    expect(r).toEqual(['success', 'queue created - awesome']);
    await expect(fs.access(path.join(queuePaths(w.root, 'local').dir, SCRIPT_DIRS_MARKER))).rejects.toThrow(/ENOENT/);
    await waitFor(async () => (await fetch(`${B}/q/local.json`)).status === 200, 'local answers');
    const id = await send(B, 'local', {});
    await waitState(B, 'local', id, ['done']);
  });
});
