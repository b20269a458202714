// What a script leaves running in its process group is ended with its run: TERM at once, KILL after the queue's kill grace.
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { QueueProc, addQueue, waitFor } from '../helpers/rq-root.js';
import { perTestRoot } from '../helpers/per-test-root.js';
import { pidInFile } from '../helpers/process-groups.js';

const ctx = perTestRoot();

// The background sleep closes fds 3/4 so the run ends as soon as the script does.
const SCRIPT = `#!/bin/bash
case "$RQ_PARAM1" in
  bg) sleep 1000 >/dev/null 2>&1 3>&- 4>&- & echo $! > "$RQ_PARAM2" ;;
  # The pid is written once TERM is ignored, and the script waits for it: a TERM before the trap would end it.
  stubborn) ( trap '' TERM; echo $BASHPID > "$RQ_PARAM2.tmp"; mv "$RQ_PARAM2.tmp" "$RQ_PARAM2"; exec sleep 1000 ) >/dev/null 2>&1 3>&- 4>&- &
    until [ -s "$RQ_PARAM2" ]; do sleep 0.01; done ;;
esac
echo "done left $RQ_PARAM1 behind" >&3
`;

/** Running, or stopped: not gone and not a zombie waiting for init to reap it. */
async function running(pid: number): Promise<boolean> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

async function queue(killGrace: number): Promise<QueueProc> {
  const script = path.join(ctx.t.root, 'leaves.sh');
  await fs.writeFile(script, SCRIPT, { mode: 0o755 });
  await addQueue(ctx.t.root, 'lo', { script, extra: { kill_grace: killGrace } });
  return (ctx.q = await QueueProc.start(ctx.t.root, 'lo'));
}

describe('processes a script leaves in its group', () => {
  it('get TERM when the run ends', async () => {
    const q = await queue(30);
    const pidFile = path.join(ctx.t.root, 'bg.pid');
    const id = await q.send({ param1: 'bg', param2: pidFile });
    await q.waitState(id, ['done']);
    const pid = await pidInFile(pidFile);
    await waitFor(async () => !(await running(pid)), `the background sleep ${pid} to be ended`);
    const logFile = path.join(ctx.t.root, 'log', 'queue-lo.log');
    await waitFor(async () => (await fs.readFile(logFile, 'utf8')).includes('left processes in its group: sent them TERM'), 'the TERM to be logged');
  });

  it('get KILL once they outlive the kill grace', async () => {
    const q = await queue(1);
    const pidFile = path.join(ctx.t.root, 'stubborn.pid');
    const id = await q.send({ param1: 'stubborn', param2: pidFile });
    await q.waitState(id, ['done']);
    const pid = await pidInFile(pidFile);
    const logFile = path.join(ctx.t.root, 'log', 'queue-lo.log');
    await waitFor(async () => (await fs.readFile(logFile, 'utf8')).includes('sent them TERM'), 'the TERM');
    // TERM is ignored: it is still there until the grace is over.
    expect(await running(pid)).toBe(true);
    await waitFor(async () => !(await running(pid)), `the stubborn sleep ${pid} to be killed`, 10_000);
    await waitFor(async () => (await fs.readFile(logFile, 'utf8')).includes('outlived the kill grace: sent them KILL'), 'the KILL to be logged');
  });
});
