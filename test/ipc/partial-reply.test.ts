// The reply of a command over many messages that failed on some: its text, its status by the first failure's catalogue code, how it is read back, its list kept bounded.
import { describe, expect, it } from 'vitest';
import { RqError } from '../../src/errors.js';
import {
  MAX_FAILURES_LISTED,
  type PartialReport,
  addFailure,
  failureOf,
  partialOf,
  partialReply,
  partialStatus,
  partialText,
} from '../../src/ipc/partial-reply.js';

const report = (failures: PartialReport['failures'], total = 5): PartialReport => ({ total, done: total - failures.length, failed: failures.length, failures });
const ENOSPC = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

describe('partial replies', () => {
  it('say how many of how many were not done, the first failure with where it was, and how many more', () => {
    expect(
      partialText(
        'created',
        report([
          { index: 3, reason: 'create message failed: ENOSPC' },
          { index: 4, reason: 'x' },
        ]),
      ),
    ).toBe('2 of 5 messages were not created (messages[3]: create message failed: ENOSPC; 1 more listed in failures)');
    expect(partialText('requeued', report([{ id: '20261201.0000.00.000.1', reason: 'msg not found' }]))).toBe(
      '1 of 5 messages were not requeued (20261201.0000.00.000.1: msg not found)',
    );
    expect(partialReply('cancelled', report([{ id: 'a', reason: 'r' }]))).toEqual([
      'fail',
      '1 of 5 messages were not cancelled (a: r)',
      report([{ id: 'a', reason: 'r' }]),
    ]);
  });

  it('answer the status of the first failure by the code it came with, never 2xx; its text is not read', () => {
    expect(partialStatus(report([{ index: 0, ...failureOf(ENOSPC, 'create message') }]))).toBe(507);
    expect(
      partialStatus(
        report([
          { id: 'a', ...failureOf(RqError.of('RQ_ERR_NOT_IN_ERR', 'done'), 'requeue message') },
          { id: 'b', reason: 'x failed: y', code: 'RQ_ERR_DISK' },
        ]),
      ),
    ).toBe(409);
    expect(partialStatus(report([{ id: 'a', reason: 'msg not found', code: 'RQ_ERR_NO_SUCH_MSG' }]))).toBe(404);
    // An older queue's failure, with no code: its catalogue text says nothing.
    expect(partialStatus(report([{ id: 'a', reason: 'msg not found' }]))).toBe(500);
    expect(partialStatus(report([{ id: 'a', reason: 'odd', code: 'RQ_ERR_REFUSED' }]))).toBe(400);
  });

  it('are told from every other reply, a classic refusal included', () => {
    const r = report([{ id: 'a', reason: 'r' }]);
    expect(partialOf(partialReply('done', r))).toEqual(r);
    expect(partialOf(['fail', 'msg not found'])).toBeUndefined();
    expect(partialOf(['ok', 3])).toBeUndefined();
    expect(partialOf(['fail', 'x', { failed: 'many' }])).toBeUndefined();
    expect(partialOf('fail')).toBeUndefined();
  });

  it('list at most MAX_FAILURES_LISTED failures, counting every one', () => {
    const r: PartialReport = { total: 5000, done: 0, failed: 0, failures: [] };
    for (let i = 0; i < 5000; i++) addFailure(r, { id: String(i), reason: 'r' });
    expect([r.failed, r.failures.length, r.failures_cut]).toEqual([5000, MAX_FAILURES_LISTED, true]);
  });

  it('give each failure a catalogue text and its code: a disk error as RQ_ERR_DISK (507), a vanished file as msg not found', () => {
    expect(failureOf(ENOSPC, 'requeue message')).toEqual({ reason: 'requeue message failed: ENOSPC: no space left on device, write', code: 'RQ_ERR_DISK' });
    expect(failureOf(Object.assign(new Error('ENOENT: x'), { code: 'ENOENT' }), 'requeue message')).toEqual({
      reason: 'msg not found',
      code: 'RQ_ERR_NO_SUCH_MSG',
    });
    expect(failureOf(RqError.of('RQ_ERR_ALREADY_FINISHED', 'done'), 'cancel message')).toEqual({
      reason: 'msg already finished (done)',
      code: 'RQ_ERR_ALREADY_FINISHED',
    });
    expect(failureOf('plain', 'x')).toEqual({ reason: 'plain', code: 'RQ_ERR_INTERNAL' });
  });
});
