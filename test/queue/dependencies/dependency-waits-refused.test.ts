// A dependency that refuses this message as a dependent (it has the most dependents one message may have): the message fails whatever its depends_fail, since it would never be told.
import { describe, expect, it } from 'vitest';
import { RqError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log.js';
import type { Message } from '../../../src/message/message.js';
import { DependencyWaits, type DependencyWaitsDeps } from '../../../src/queue/dependencies/dependency-waits.js';

const ID = (n: number) => `20261121.1643.46.613.${n}`;
const REF = `other/${ID(2)}`;

describe('a registration refused for too many dependents', () => {
  it.each(['fail', 'run', 'wait'])('fails the message with the reason, never lets it run or wait (depends_fail %s)', async (policy) => {
    const moves: string[] = [];
    const failed: [string, string][] = [];
    const waits = new DependencyWaits({
      spool: { name: 'test' },
      moves: { park: (m: Message) => moves.push(`park ${m.msg_id}`), unpark: (id: string) => moves.push(`unpark ${id}`), release: () => moves.push('release') },
      log: silentLogger(),
      register: () => Promise.reject(RqError.of('RQ_ERR_TOO_MANY_DEPENDENTS', REF, 10_000)),
      fail: async (msg: Message, status: string) => void failed.push([msg.msg_id, status]),
      pump: () => undefined,
    } as unknown as DependencyWaitsDeps);
    expect(waits.admit({ msg_id: ID(1), depends: [REF], depends_fail: policy } as unknown as Message)).toBe(true);
    await waits.register(ID(1));
    expect(waits.waitingOf(ID(1))).toBeUndefined();
    expect(moves).toEqual([`park ${ID(1)}`, `unpark ${ID(1)}`]);
    expect(failed).toEqual([
      [ID(1), `DEPENDENCY REFUSED - ${REF} already has 10000 dependents, the most one message may have: let the others wait on a message that waits on it`],
    ]);
    waits.close();
  });
});
