// The web's check of the fleet's own user: the secret asked of rq-mgr, and again once what it answered is a second old
// (what the user may ask is tested across real hosts in test/fleet/fleet-secret.test.ts).
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { fleetPeer } from '../../src/web/fleet-peer.js';
import { type Answer, answer } from '../../src/ipc/answer.js';
import { type PeerCredential, isPeerCredential } from '../../src/ipc/fleet-reply.js';

/** rq-mgr's side: what `fleet_credential` answers now, and how often it was asked. */
function mgrWith(first: Answer<PeerCredential>) {
  const m = {
    answer: first,
    asked: 0,
    fleetCredential: async () => (m.asked++, m.answer),
  };
  return m;
}
const SECRET = 'x'.repeat(43);
/** rq-mgr's reply on the wire, read as its client reads it. */
const ok = (password: string): Answer<PeerCredential> => answer(['ok', { user: 'rq-fleet', password }], isPeerCredential);

describe('fleetPeer().check', () => {
  it('takes the secret and nothing else, asking rq-mgr at most once a second', async () => {
    const mgr = mgrWith(ok(SECRET));
    let now = 0;
    const { check } = fleetPeer(mgr, '', pino({ level: 'silent' }), () => now);
    expect(await check(SECRET)).toBe(true);
    expect(await check(SECRET)).toBe(true);
    expect(mgr.asked).toBe(1);
    // A wrong one within the second: refused without asking again.
    now = 500;
    expect(await check('wrong')).toBe(false);
    expect(mgr.asked).toBe(1);
    now = 1500;
    expect(await check('wrong')).toBe(false);
    expect(mgr.asked).toBe(2);
  });

  it('a secret changed shuts the old one out within a second, though nobody gave the new one; rq-mgr silent keeps the one held', async () => {
    const mgr = mgrWith(ok(SECRET));
    let now = 0;
    const { check } = fleetPeer(mgr, '', pino({ level: 'silent' }), () => now);
    expect(await check(SECRET)).toBe(true);
    const changed = 'N'.repeat(43);
    mgr.answer = ok(changed);
    now = 999;
    expect(await check(SECRET)).toBe(true);
    now = 1000;
    expect(await check(SECRET)).toBe(false);
    expect(await check(changed)).toBe(true);
    expect(mgr.asked).toBe(2);
    // Calls at once while rq-mgr is asked wait for its one answer.
    now = 2000;
    mgr.fleetCredential = () => (mgr.asked++, Promise.reject(new Error('rq-mgr restarting')));
    expect(await Promise.all([check(changed), check(changed), check(SECRET)])).toEqual([true, true, false]);
    expect(mgr.asked).toBe(3);
  });

  it('a secret rq-mgr had not yet read is taken once it has', async () => {
    const mgr = mgrWith(answer(['fail', 'not yet', 'RQ_ERR_FLEET_NO_SECRET'], isPeerCredential));
    let now = 0;
    const { check } = fleetPeer(mgr, '', pino({ level: 'silent' }), () => now);
    expect(await check(SECRET)).toBe(false);
    mgr.answer = ok(SECRET);
    expect(await check(SECRET)).toBe(false);
    now = 1000;
    expect(await check(SECRET)).toBe(true);
    expect(mgr.asked).toBe(2);
  });
});
