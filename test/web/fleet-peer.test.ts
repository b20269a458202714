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
/** The secret rq-mgr gives once it was changed in etcd. */
const CHANGED = 'N'.repeat(43);

/** A check whose rq-mgr answers SECRET, taken once at 0 ms; `clock.now` moves its time. */
async function checkedOnce() {
  const mgr = mgrWith(ok(SECRET));
  const clock = { now: 0 };
  const { check } = fleetPeer(mgr, '', pino({ level: 'silent' }), () => clock.now);
  expect(await check(SECRET)).toBe(true);
  return { mgr, clock, check };
}

describe('fleetPeer().check', () => {
  it('takes the secret and nothing else, asking rq-mgr again on a miss at most every 250 ms and anyway once a second', async () => {
    const mgr = mgrWith(ok(SECRET));
    let now = 0;
    const { check } = fleetPeer(mgr, '', pino({ level: 'silent' }), () => now);
    expect(await check(SECRET)).toBe(true);
    expect(await check(SECRET)).toBe(true);
    expect(mgr.asked).toBe(1);
    // A wrong one within 250 ms: refused without asking again; later, asked again first.
    now = 200;
    expect(await check('wrong')).toBe(false);
    expect(mgr.asked).toBe(1);
    now = 300;
    expect(await check('wrong')).toBe(false);
    expect(mgr.asked).toBe(2);
    now = 1000;
    expect(await check(SECRET)).toBe(true);
    expect(mgr.asked).toBe(2);
    now = 1300;
    expect(await check(SECRET)).toBe(true);
    expect(mgr.asked).toBe(3);
  });

  it('a secret CHANGED shuts the old one out within a second, though nobody gave the new one; rq-mgr silent keeps the one held', async () => {
    const { mgr, clock, check } = await checkedOnce();
    mgr.answer = ok(CHANGED);
    clock.now = 999;
    expect(await check(SECRET)).toBe(true);
    clock.now = 1000;
    expect(await check(SECRET)).toBe(false);
    expect(await check(CHANGED)).toBe(true);
    expect(mgr.asked).toBe(2);
    clock.now = 3000;
    mgr.fleetCredential = () => (mgr.asked++, Promise.reject(new Error('rq-mgr restarting')));
    expect(await check(CHANGED)).toBe(true);
    expect(mgr.asked).toBe(3);
  });

  it('a host that read a new secret first is let in at once; calls while rq-mgr is asked wait for its one answer', async () => {
    const { mgr, clock, check } = await checkedOnce();
    mgr.answer = ok(CHANGED);
    // Held for 300 ms only: the miss asks again.
    clock.now = 300;
    expect(await check(CHANGED)).toBe(true);
    expect(mgr.asked).toBe(2);
    // rq-mgr answers late with a third secret: every call made meanwhile waits for it, and one question is asked.
    const third = 'T'.repeat(43);
    let answerNow!: () => void;
    mgr.fleetCredential = () => (mgr.asked++, new Promise((resolve) => (answerNow = () => resolve(ok(third)))));
    clock.now = 1400;
    const calls = [check(third), check(third), check(CHANGED)];
    answerNow();
    expect(await Promise.all(calls)).toEqual([true, true, false]);
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
