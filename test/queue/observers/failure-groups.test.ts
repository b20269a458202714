// Failure groups: which group an err message is in, what a group's page says of each message, and the groups kept by the queue's events (a deletion, a failure during the build, a read that lands late).
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { groupOf } from '../../../src/queue/observers/failure-groups.js';
import { gate } from '../../helpers/gate.js';
import type { InProcess } from '../in-process.js';
import { inProcessQueues } from '../in-process-session.js';

const queue = inProcessQueues({ retry: { max_retries: 0 } });

describe('groupOf', () => {
  it('groups an exhausted message by its failure, like a failed one; other outcomes by the outcome', () => {
    const last = { kind: 'err', text: 'ValueError: bad' };
    expect(groupOf({ outcome: 'exhausted', last_failure: last } as never, null)).toBe('ValueError');
    expect(groupOf({ outcome: 'failed', last_failure: last } as never, null)).toBe('ValueError');
    expect(groupOf({ outcome: 'expired', last_failure: last } as never, null)).toBe('expired');
  });

  it("takes the class from the last failure's text before the status, then its kind, then err", () => {
    expect(groupOf({ last_failure: { kind: 'err', text: 'KeyError: k' } } as never, 'ValueError: v')).toBe('KeyError');
    expect(groupOf({ last_failure: { kind: 'timeout', text: 'ran over 30 s' } } as never, 'ValueError: v')).toBe('timeout');
    // A message sent with last_failure null (a client may): the status tells.
    expect(groupOf({ last_failure: null } as never, 'ValueError: v')).toBe('ValueError');
    expect(groupOf({} as never, null)).toBe('err');
  });
});

/** Starts message `id` (script `n`) and has it fail with `line`; resolves once it is in err. */
async function fail(q: InProcess, n: number, id: string, line: string): Promise<void> {
  const s = await q.launcher.nth(n);
  const finished = q.next('finished', ({ msg }) => msg.msg_id === id);
  s.say(line);
  s.exit(0);
  await finished;
}

describe('failure groups kept by events', () => {
  it("a group's page: newest created first whatever the order they failed in, each with its outcome, failure kind, text and time", async () => {
    const q = await queue({ num_workers: 2, retry: { max_retries: 0 } });
    const older = (await q.send({ param1: 'older' })).msg_id;
    q.clock.ms += 1000;
    const newer = (await q.send({ param1: 'newer' })).msg_id;
    expect(await q.queue.stats.groups.groups()).toEqual({});
    // The newer fails first: the groups hear of it first.
    await fail(q, 1, newer, 'fatal no such customer');
    q.clock.ms += 1000;
    await fail(q, 0, older, 'fatal no such order');
    const at = (ms: number) => new Date(ms).toISOString();
    expect(await q.queue.stats.groups.page('fatal', 0, 10)).toEqual({
      group: 'fatal',
      total: 2,
      messages: [
        { msg_id: newer, outcome: 'fatal', failure: 'fatal', text: 'no such customer', at: at(q.clock.ms - 1000) },
        { msg_id: older, outcome: 'fatal', failure: 'fatal', text: 'no such order', at: at(q.clock.ms) },
      ],
    });
  });

  it('a deleted err message leaves its group', async () => {
    const q = await queue();
    const a = (await q.send({ param1: 'a' })).msg_id;
    await fail(q, 0, a, 'err KeyError: k');
    expect(await q.queue.stats.groups.groups()).toEqual({ KeyError: 1 });
    expect(await q.cmd('delete_message', { msg_id: a })).toEqual(['ok', expect.anything()]);
    expect(await q.queue.stats.groups.groups()).toEqual({});
  });

  it('an err message without an outcome (as classic RQ leaves them) is a failed one of the class its status names', async () => {
    const q = await queue();
    const a = (await q.send({ param1: 'a' })).msg_id;
    await fail(q, 0, a, 'err KeyError: k');
    const file = path.join(q.root, 'queues', 'q', 'err', a, 'msg');
    const { outcome: _, last_failure: __, ...classic } = JSON.parse(await fs.readFile(file, 'utf8'));
    await fs.writeFile(file, JSON.stringify(classic));
    expect(await q.queue.stats.groups.page('KeyError', 0, 10)).toEqual({
      group: 'KeyError',
      total: 1,
      messages: [{ msg_id: a, outcome: 'failed', text: 'KeyError: k' }],
    });
  });

  it('a message that fails after the build listed err/ is in its group once the build ends', async () => {
    const q = await queue();
    const spool = q.queue.spool as unknown as { listFlat: (...args: unknown[]) => Promise<string[]> };
    const real = spool.listFlat.bind(spool);
    const held = gate();
    let listed = false;
    spool.listFlat = async (...args: unknown[]) => {
      const ids = await real(...args);
      listed = true;
      await held.wait;
      return ids;
    };
    const built = q.queue.stats.groups.groups();
    await expect.poll(() => listed).toBe(true);
    const a = (await q.send({ param1: 'a' })).msg_id;
    await fail(q, 0, a, 'err KeyError: k');
    held.open();
    expect(await built).toEqual({ KeyError: 1 });
    spool.listFlat = real;
  });

  it('a read of a failed message that lands after the message left err puts it in no group', async () => {
    const q = await queue();
    expect(await q.queue.stats.groups.groups()).toEqual({});
    const a = (await q.send({ param1: 'a' })).msg_id;
    const spool = q.queue.spool as unknown as { readMessage: (state: string, id: string) => Promise<unknown> };
    const real = spool.readMessage.bind(spool);
    const held = gate();
    let read = false;
    spool.readMessage = async (state: string, id: string) => {
      const msg = await real(state, id);
      if (state !== 'err' || id !== a || read) return msg;
      // The groups' read of the message that just failed: it answers only after the requeue below.
      read = true;
      await held.wait;
      return msg;
    };
    await fail(q, 0, a, 'err KeyError: k');
    await expect.poll(() => read).toBe(true);
    expect(await q.cmd('requeue_message', { msg_id: a })).toEqual(['ok', expect.anything()]);
    held.open();
    spool.readMessage = real;
    expect(await q.queue.stats.groups.groups()).toEqual({});
    expect(await q.state(a)).not.toBe('err');
  });
});
