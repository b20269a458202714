// DependencyWaits.check in a fleet: another host's full id is checked against the fleet, kept once in its one spelling, and asked for on its host.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import { DependencyWaits, type DependencyWaitsDeps } from '../../../src/queue/dependencies/dependency-waits.js';

const ID = (n: number) => `20261121.1643.46.613.${n}`;
const FAR = `http://10.0.0.6:3333/q/parts/${ID(7)}`;
const saying = (text: string, code?: string) => ({ ...(code ? { code } : {}), message: expect.stringContaining(text) });

/** Waits of queue `report` whose checks go to `fleetRef` and `exists`; nothing else is called by a check. */
function waitsWith(fleetRef: DependencyWaitsDeps['fleetRef'], exists: DependencyWaitsDeps['exists']): DependencyWaits {
  return new DependencyWaits({
    spool: { name: 'report' },
    log: silentLogger(),
    hostUrl: 'http://10.0.0.5:3333/',
    queueExists: (q: string) => q === 'other' || q === 'report',
    fleetRef,
    exists,
  } as unknown as DependencyWaitsDeps);
}

describe('check (at create) in a fleet', () => {
  it("asks the fleet for another host's full id, keeps its one spelling once, and asks its host whether it exists", async () => {
    const asked: string[] = [];
    const waits = waitsWith(
      async (ref, field) => (asked.push(`${field} ${ref}`), ref.replace(/\/$/, '')),
      async (ref) => (asked.push(`exists ${ref}`), true),
    );
    expect(waits.refContext.fleet).toBe(true);
    expect(await waits.check([FAR, `${FAR}/`, `other/${ID(2)}`])).toEqual([FAR, `other/${ID(2)}`]);
    expect(asked.sort()).toEqual([`depends[0] ${FAR}`, `depends[1] ${FAR}/`, `exists ${FAR}`, `exists ${FAR}`, `exists other/${ID(2)}`].sort());
    waits.close();
  });

  it('passes on the refusal of a ref of no fleet host, and names the place of a far message that is not there or whose host did not answer', async () => {
    const refusing = waitsWith(
      async (ref, field) => {
        throw Object.assign(new Error(`${field}: not in the fleet`), { code: 'RQ_ERR_BAD_DEPENDENCY' });
      },
      async () => true,
    );
    await expect(refusing.check([`other/${ID(2)}`, FAR])).rejects.toMatchObject(saying('depends[1]: not in the fleet', 'RQ_ERR_BAD_DEPENDENCY'));
    const missing = waitsWith(
      async (ref) => ref,
      async (r) => r !== FAR,
    );
    await expect(missing.check([`other/${ID(2)}`, FAR])).rejects.toMatchObject(saying(`depends[1]: no message ${FAR}`));
    const down = waitsWith(
      async (ref) => ref,
      async (r) => (r === FAR ? 'ECONNREFUSED' : true),
    );
    await expect(down.check([`other/${ID(2)}`, FAR])).rejects.toMatchObject(
      saying('depends[1]: its host could not be asked (ECONNREFUSED)', 'RQ_ERR_BAD_DEPENDENCY'),
    );
    for (const w of [refusing, missing, down]) w.close();
  });
});
