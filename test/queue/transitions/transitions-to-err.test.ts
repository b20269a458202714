// Transitions.toErr (a waiting message finished to err, or purged) on a real spool in a temp dir: status and msg before the rename, counts, events, and memory put back when the disk refuses.
import fs from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Message } from '../../../src/message/message.js';
import { caught } from '../../helpers/temp-spool.js';
import { T0, transitionsPerTest } from './on-temp-spool.js';

const s = transitionsPerTest();

describe('toErr', () => {
  it('que → err with its status and outcome, counted, heard of as finished', async () => {
    const q = await s.make(true);
    await s.moves.toErr(q.msg_id, 'que', q, {
      status: 'CANCELLED - no',
      outcome: 'cancelled',
      actor: 'cancel',
      fields: { cancel: { by: 'me' } },
    });
    expect(await s.spool.readStatus('err', q.msg_id)).toEqual({ job_status: 'CANCELLED - no' });
    expect(await s.spool.readMessage('err', q.msg_id)).toMatchObject({
      outcome: 'cancelled',
      cancel: { by: 'me' },
    });
    expect(q.outcome).toBe('cancelled');
    expect(s.index.counts().err).toBe(6);
    expect(s.seen).toEqual(['finished']);
    const last = (await s.spool.readHistory('err', q.msg_id)).at(-1)!;
    expect(last).toMatchObject({ from: 'que', to: 'err', actor: 'cancel', reason: 'CANCELLED - no', outcome: 'cancelled' });
    expect(last).not.toHaveProperty('failure');
  });

  it('the finished event carries the status as err', async () => {
    const q = await s.make(true);
    const heard = new Promise((r) => s.events.once('finished', r));
    await s.moves.toErr(q.msg_id, 'que', q, { status: 'EXPIRED', outcome: 'expired', actor: 'expiry' });
    expect(await heard).toMatchObject({
      msg: { msg_id: q.msg_id },
      outcome: { state: 'err', statusText: 'EXPIRED' },
      code: null,
      signal: null,
      ms: null,
    });
  });

  it('with purge removes it instead, and observers hear it removed', async () => {
    const p = await s.make(false);
    await s.moves.toErr(p.msg_id, 'prep', p, { status: 'CANCELLED - x', outcome: 'cancelled', actor: 'cancel', purge: true });
    expect(await s.spool.locate(p.msg_id)).toBeNull();
    expect(s.index.counts().err).toBe(5);
    expect(s.seen).toEqual(['removed prep']);
  });

  it('a failure counts in failures and is last_failure, with the history naming its kind', async () => {
    const q = await s.make(true, { failures: 2 } as Partial<Message>);
    await s.moves.toErr(q.msg_id, 'que', q, {
      status: 'LIMIT',
      outcome: 'failed',
      actor: 'limits',
      failure: { kind: 'exit', text: 'no', code: 3, signal: null },
      details: { exit: 3 },
    });
    const m = await s.spool.readMessage('err', q.msg_id);
    expect(m).toMatchObject({
      failures: 3,
      last_failure: { kind: 'exit', text: 'no', code: 3, at: new Date(T0).toISOString() },
    });
    expect(m.last_failure).not.toHaveProperty('signal');
    expect((await s.spool.readHistory('err', q.msg_id)).at(-1)).toMatchObject({ failure: 'exit', outcome: 'failed', exit: 3 });
  });

  it('refused by the disk: a message still where it was is put back (prep as known, que enqueued); one gone is not', async () => {
    const p = await s.make(false);
    await s.block('err', p.msg_id);
    await caught(s.moves.toErr(p.msg_id, 'prep', p, { status: 'S', outcome: 'cancelled', actor: 'a' }, p));
    expect(s.index.takePrep(p.msg_id)).toBe(p);
    const p2 = await s.make(false);
    await s.block('err', p2.msg_id);
    await caught(s.moves.toErr(p2.msg_id, 'prep', p2, { status: 'S', outcome: 'cancelled', actor: 'a' }));
    expect(s.index.takePrep(p2.msg_id)).toBeNull();
    const q = await s.make(true);
    await s.block('err', q.msg_id);
    await caught(s.moves.toErr(q.msg_id, 'que', q, { status: 'S', outcome: 'cancelled', actor: 'a' }));
    expect(s.index.isQueued(q.msg_id)).toBe(true);
    const gone = await s.make(true);
    await fs.rm(s.spool.msgDir('que', gone.msg_id), { recursive: true });
    await caught(s.moves.toErr(gone.msg_id, 'que', gone, { status: 'S', outcome: 'cancelled', actor: 'a' }));
    expect(s.index.liveState(gone.msg_id)).toBeNull();
    expect(s.index.counts().err).toBe(5);
    expect(s.seen).toEqual([]);
  });
});
