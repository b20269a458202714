// The crash-loop limit (rq-beyond §B13): crashes count in `interrupts`, graceful stops do not, and past max_interrupts the message ends in err.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pidInFile } from '../../helpers/process-groups.js';
import { QueueProc, type TestRoot, addQueue, makeRoot } from '../../helpers/rq-root.js';

let t: TestRoot;
let q: QueueProc;

beforeAll(async () => {
  t = await makeRoot();
  await addQueue(t.root, 'iq', { num_workers: 1, extra: { max_interrupts: 1, kill_grace: 0.2 } });
  q = await QueueProc.start(t.root, 'iq');
});
afterAll(async () => {
  await q?.stop();
  await t?.cleanup();
});

const pidFile = () => path.join(t.root, 'iq.pid');
async function running(): Promise<number> {
  const pid = await pidInFile(pidFile());
  await fs.rm(pidFile());
  return pid;
}

describe('interrupts', () => {
  it('a graceful stop does not count; each crash does; past max_interrupts the message ends in err interrupted', async () => {
    const id = await q.send({ param1: 'forever', param2: pidFile() });
    await running();
    await q.stop();
    q = await QueueProc.start(t.root, 'iq');
    await running();
    let m = (await q.cmd('get_message', { msg_id: id }))[1];
    expect(m.interrupts).toBeUndefined();

    await q.kill9();
    q = await QueueProc.start(t.root, 'iq');
    await running();
    m = (await q.cmd('get_message', { msg_id: id }))[1];
    expect(m).toMatchObject({ state: 'run', interrupts: 1 });
    expect(m.failures).toBeUndefined();

    await q.kill9();
    q = await QueueProc.start(t.root, 'iq');
    m = await q.waitState(id, ['err']);
    expect(m).toMatchObject({ outcome: 'interrupted', interrupts: 2, status: 'err - INTERRUPTED 2 TIMES - max_interrupts is 1' });
  });

  it('max_interrupts is checked in config.json', async () => {
    const { normaliseQueueConfig } = await import('../../../src/config/queue-config.js');
    expect(() => normaliseQueueConfig({ name: 'x', script: 's', num_workers: 1, max_interrupts: 0 }, 'c.json')).toThrow(
      'c.json: max_interrupts: expected a whole number 1-1000, received 0',
    );
  });
});
