// script_dirs is a directory, not a prefix of names: a sibling whose name begins with an allowed one (defs-evil/ beside defs/) is outside it, at /new_queue, at /new_queue_link and at every start of a queue made over HTTP.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { QueueClient } from '../../src/ipc/queue-client.js';
import { VERBS_SH, waitFor } from '../helpers/rq-root.js';
import { type WebRoot, postForm, send, stateOf, startWebRoot, waitState } from './web-root.js';

let w: WebRoot;
const EVIL = '#!/bin/bash\ntouch "$(dirname "$0")/ran"\necho "done evil" >&3\n';

beforeAll(async () => {
  w = await startWebRoot({
    config: { allow_new_queue: true, script_dirs: ['defs'] },
    setup: async (root) => {
      await fs.mkdir(path.join(root, 'defs'));
      await fs.mkdir(path.join(root, 'defs-evil'));
      await fs.copyFile(VERBS_SH, path.join(root, 'defs', 'v1.sh'));
      await fs.chmod(path.join(root, 'defs', 'v1.sh'), 0o755);
      await fs.symlink('v1.sh', path.join(root, 'defs', 'job.sh'));
      await fs.writeFile(path.join(root, 'defs-evil', 'evil.sh'), EVIL, { mode: 0o755 });
      await fs.writeFile(path.join(root, 'defs-evil', 'q.json'), JSON.stringify({ name: 'sib_link', script: './defs/job.sh', num_workers: 1 }));
    },
    queues: {},
  });
}, 60_000);
afterAll(async () => {
  await w?.stop();
});

const ran = () =>
  fs.access(path.join(w.root, 'defs-evil', 'ran')).then(
    () => true,
    () => false,
  );

it('/new_queue with a script in defs-evil/ is refused (403 naming script_dirs); no queue is made', async () => {
  const res = await postForm(`${w.base}/new_queue`, {
    'queue[name]': 'sib_new',
    'queue[script]': './defs-evil/evil.sh',
    'queue[num_workers]': '1',
    'queue[exec_prefix]': '',
  });
  expect(res.status).toBe(403);
  expect(await res.text()).toBe('403 - queue[script]: expected a file inside script_dirs (defs), received "./defs-evil/evil.sh"');
  await expect(fs.access(queuePaths(w.root, 'sib_new').dir)).rejects.toThrow(/ENOENT/);
});

it('/new_queue_link to a config file in defs-evil/ is refused; no queue is made', async () => {
  const res = await postForm(`${w.base}/new_queue_link`, { 'queue[json_path]': 'defs-evil/q.json' });
  expect(res.status).toBe(403);
  expect(await res.text()).toBe('403 - queue[json_path]: expected a file inside script_dirs (defs), received "defs-evil/q.json"');
  await expect(fs.access(queuePaths(w.root, 'sib_link').dir)).rejects.toThrow(/ENOENT/);
});

it('a queue made over HTTP whose link in defs/ is swapped to defs-evil/ is held in SCRIPTERROR at its next start; its message is not run', async () => {
  const made = await postForm(`${w.base}/new_queue`, {
    'queue[name]': 'sib_held',
    'queue[script]': './defs/job.sh',
    'queue[num_workers]': '1',
    'queue[exec_prefix]': '',
  });
  expect(made.status).toBe(303);
  await waitFor(async () => (await fetch(`${w.base}/q/sib_held.json`)).status === 200, 'sib_held to answer');
  const first = await send(w.base, 'sib_held', { param1: 'done' });
  await waitState(w.base, 'sib_held', first, ['done']);

  const tmp = path.join(w.root, 'defs', 'job.sh.new');
  await fs.symlink('../defs-evil/evil.sh', tmp);
  await fs.rename(tmp, path.join(w.root, 'defs', 'job.sh'));
  const held = await send(w.base, 'sib_held', { param1: 'done' });
  const client = QueueClient.oneShot(queuePaths(w.root, 'sib_held').sock, { timeoutMs: 5000 });
  const detail = await waitFor(async () => {
    const d = await client.statusDetail();
    return d.ok && d.value.status === 'SCRIPTERROR' ? d.value : false;
  }, 'sib_held in SCRIPTERROR');
  const real = await fs.realpath(path.join(w.root, 'defs-evil', 'evil.sh'));
  expect(detail.reason).toBe(
    `script "./defs/job.sh" resolves to ${real}, outside script_dirs: a queue made over HTTP runs only a file inside script_dirs (defs)`,
  );
  expect(await stateOf(w.base, 'sib_held', held)).toBe('que');
  expect(await ran()).toBe(false);
});
