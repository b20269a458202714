// killStaleScript: the script a killed queue process left running (without run cgroups, only its process group
// holds it) is killed at the queue's next start if, and only if, its environment names the message.
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { killStaleScript } from '../../../src/queue/launch/stale-scripts.js';
import { waitFor } from '../../helpers/rq-root.js';
import { alive, groupMembers, killLeftoverGroups } from '../../helpers/process-groups.js';

const groups = killLeftoverGroups();
let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rq-stale-'));
});
afterEach(() => fs.rm(dir, { recursive: true, force: true }));

/** A group of two (a shell and its sleep), as a script and its child, started with RQ_MSG_ID=`msgId`; its pgid is in `dir/pid` as a queue writes it. */
async function leftScript(msgId: string): Promise<number> {
  const child = spawn('/bin/sh', ['-c', 'sleep 1000 & wait'], { detached: true, stdio: 'ignore', env: { ...process.env, RQ_MSG_ID: msgId } });
  const pgid = child.pid!;
  groups.push(pgid);
  await fs.writeFile(path.join(dir, 'pid'), `${pgid}\n`);
  await waitFor(async () => (await groupMembers(pgid)).length === 2, `the shell ${pgid} and its sleep`);
  return pgid;
}

describe('killStaleScript', () => {
  it("kills the whole group recorded in the message's pid file when a member was started for the message", async () => {
    const pgid = await leftScript('20261127.0700.00.100.1');
    const members = await groupMembers(pgid);
    const killed = await killStaleScript(dir, '20261127.0700.00.100.1');
    expect(killed.sort()).toEqual(members.sort());
    expect(members.filter(alive)).toEqual([]);
  });

  it('leaves alone a group none of whose members names the message (the pid was reused)', async () => {
    const pgid = await leftScript('20261127.0700.00.100.2');
    expect(await killStaleScript(dir, '20261127.0700.00.100.3')).toEqual([]);
    expect(await groupMembers(pgid)).toHaveLength(2);
  });

  it('does nothing without a usable pid file', async () => {
    expect(await killStaleScript(dir, 'x')).toEqual([]);
    for (const text of ['', 'abc', '1', '0', '-5']) {
      await fs.writeFile(path.join(dir, 'pid'), text);
      expect(await killStaleScript(dir, 'x'), text).toEqual([]);
    }
  });
});
