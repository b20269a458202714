// Expiry and a crash (rq-beyond §B4, §B13): a message that started before its deadline and was interrupted by a SIGKILL of its queue runs again at restart, though the deadline passed meanwhile; it is not expired.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { alive, killLeftoverGroups, pidInFile } from '../../helpers/process-groups.js';
import { QueueProc, type TestRoot, addQueue, makeRoot, waitFor } from '../../helpers/rq-root.js';

/** Hangs (writing its pid to $RQ_PARAM2) until the file $RQ_PARAM2.go exists; then a run ends done at once. */
const HOLD_SH = '#!/bin/bash\nif [ -e "$RQ_PARAM2.go" ]; then echo "done released" >&3; exit 0; fi\necho "$$" > "$RQ_PARAM2"\nsleep 1000 & wait\n';

const groups = killLeftoverGroups();
let t: TestRoot | undefined;
let q: QueueProc | undefined;
afterEach(async () => {
  await q?.stop();
  await t?.cleanup();
  q = t = undefined;
});

interface Line {
  from?: string;
  to?: string;
  actor?: string;
  reason?: string;
}

it('started in time, interrupted by kill -9, restarted after its expire_at and its max_age: runs again and ends done, not expired', async () => {
  t = await makeRoot();
  const script = path.join(t.root, 'hold.sh');
  await fs.writeFile(script, HOLD_SH, { mode: 0o755 });
  await addQueue(t.root, 'ex', { script, num_workers: 2 });
  q = await QueueProc.start(t.root, 'ex');

  const at = Math.floor(Date.now() / 1000) + 2;
  const pids = [path.join(t.root, 'by-expire-at.pid'), path.join(t.root, 'by-max-age.pid')];
  const ids = [await q.send({ param2: pids[0], expire_at: at }), await q.send({ param2: pids[1], max_age: 1 })];
  const old = await Promise.all(pids.map((p) => pidInFile(p)));
  groups.push(...old);
  for (const id of ids) expect(await q.state(id)).toBe('run');

  await q.kill9();
  // Both deadlines (expire_at; due + max_age, a second after the create) are behind us before the queue comes back.
  await waitFor(() => Date.now() > at * 1000 + 500, 'both deadlines to pass', 10_000, 50);
  for (const p of pids) await fs.writeFile(`${p}.go`, '');
  q = await QueueProc.start(t.root, 'ex');

  for (const id of ids) {
    const m = await q.waitState(id, ['done', 'err']);
    expect(m.state, `${id}: ${m.status}`).toBe('done');
    const lines: Line[] = (await q.cmd('get_history', { msg_id: id }))[1];
    expect(lines.filter((l) => l.from === 'que' && l.to === 'run')).toHaveLength(2);
    expect(lines.filter((l) => l.from === 'run' && l.to === 'que')).toEqual([expect.objectContaining({ actor: 'recovery', reason: 'interrupted' })]);
  }
  expect(old.map(alive)).toEqual([false, false]);
});
