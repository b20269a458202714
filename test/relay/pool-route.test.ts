// Where a pool message goes on an attempt: chosen and bound before the prep, kept while its host takes the queue or a commit went there unanswered, chosen again otherwise.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Answer } from '../../src/ipc/answer.js';
import type { FleetView } from '../../src/ipc/fleet-reply.js';
import { RELAY_HOST_FILE, markCommitSent, readBinding } from '../../src/relay/pool-binding.js';
import { poolJob, poolRoute } from '../../src/relay/pool-route.js';
import { writeRelayId } from '../../src/relay/relay-id.js';

let jobDir: string;
beforeEach(() => {
  jobDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rq-pool-route-'));
});
afterEach(() => fs.rmSync(jobDir, { recursive: true, force: true }));

const fleet = (
  up: Record<string, string>,
  reachable = true,
  member: FleetView['member'] = { state: 'member', since: '' },
): (() => Promise<Answer<FleetView>>) => {
  const value: FleetView = {
    fleet: 'f',
    host: 's',
    member,
    etcd: { endpoints: [], reachable },
    hosts: Object.entries(up).map(([h, status]) => ({
      host: h,
      state: 'up',
      url: `http://${h}:3333/`,
      since: null,
      queues: { work: { status, ready: 0, running: 0, workers: 2 } },
    })),
  };
  return () => Promise.resolve({ ok: true, value, raw: ['ok', value] });
};
const deps = (up: Record<string, string>) => ({ fleet: fleet(up), log: () => undefined, random: () => 0 });

describe('poolRoute', () => {
  it('binds the chosen host before anything is sent, and the far copy names its queue there', async () => {
    const r = await poolRoute(jobDir, 'work', deps({ a: 'UP' }));
    expect(r).toMatchObject({ kind: 'host', host: 'a', target: { base: 'http://a:3333', queue: 'work' }, dest: 'http://a:3333/q/work' });
    expect(await readBinding(jobDir)).toEqual({ host: 'a', url: 'http://a:3333/' });
  });

  it('stays with its host while that host takes the queue', async () => {
    await poolRoute(jobDir, 'work', deps({ a: 'UP' }));
    expect(await poolRoute(jobDir, 'work', deps({ b: 'UP', a: 'UP' }))).toMatchObject({ host: 'a', member: true });
  });

  it('chooses again, forgetting the far copy, when its host is gone and no commit went there', async () => {
    await poolRoute(jobDir, 'work', deps({ a: 'UP' }));
    await writeRelayId(jobDir, 'http://a:3333/q/work/1');
    expect(await poolRoute(jobDir, 'work', deps({ b: 'UP', a: 'PAUSE' }))).toMatchObject({ host: 'b' });
    expect(fs.existsSync(path.join(jobDir, 'relay_id'))).toBe(false);
  });

  it('passes over a host that failed this run before any commit, forgetting its copy; waits when no other takes the queue', async () => {
    await poolRoute(jobDir, 'work', deps({ a: 'UP' }));
    await writeRelayId(jobDir, 'http://a:3333/q/work/1');
    const failed = new Set(['a']);
    expect(await poolRoute(jobDir, 'work', { ...deps({ a: 'UP', b: 'UP' }), failed })).toMatchObject({ host: 'b' });
    expect(fs.existsSync(path.join(jobDir, 'relay_id'))).toBe(false);
    expect(await poolRoute(jobDir, 'work', { ...deps({ a: 'UP', b: 'UP' }), failed: new Set(['a', 'b']) })).toEqual({
      kind: 'wait',
      reason: 'no other host of fleet f has queue work UP',
    });
    // A later run has failed nowhere yet: every host is a choice again.
    expect(await poolRoute(jobDir, 'work', deps({ a: 'UP' }))).toMatchObject({ host: 'a' });
  });

  it('stays with a host a commit went to unanswered, even when it is gone: another copy could run twice', async () => {
    const first = await poolRoute(jobDir, 'work', deps({ a: 'UP' }));
    expect(first).toMatchObject({ host: 'a', member: true });
    await writeRelayId(jobDir, 'http://a:3333/q/work/1');
    if (first.kind === 'host') await first.beforeCommit();
    // Gone from the fleet, or rq-mgr not saying: still its host, but no longer one given the fleet's credentials.
    expect(await poolRoute(jobDir, 'work', deps({ b: 'UP' }))).toMatchObject({ host: 'a', member: false });
    // Even when it failed this run: only it can say whether the commit landed.
    expect(await poolRoute(jobDir, 'work', { ...deps({ a: 'UP', b: 'UP' }), failed: new Set(['a']) })).toMatchObject({ host: 'a', member: true });
    const silent = () => Promise.reject(new Error('no rq-mgr'));
    expect(await poolRoute(jobDir, 'work', { fleet: silent, log: () => undefined })).toMatchObject({ host: 'a', member: false });
    // Up as rq-mgr last saw it, but etcd not answering: that view may be old.
    expect(await poolRoute(jobDir, 'work', { fleet: fleet({ a: 'UP' }, false), log: () => undefined })).toMatchObject({ host: 'a', member: false });
    // Up again (its queue paused is still a member): given them again.
    expect(await poolRoute(jobDir, 'work', deps({ a: 'PAUSE' }))).toMatchObject({ host: 'a', member: true });
  });

  it('waits when no host takes the queue; fails on a host in no fleet; a binding it cannot read is chosen again', async () => {
    expect(await poolRoute(jobDir, 'work', deps({ a: 'PAUSE' }))).toEqual({ kind: 'wait', reason: 'no host of fleet f has queue work UP' });
    // A host that has not read the fleet from etcd says so: the hosts it lacks may be there.
    const since = '2026-12-07T17:40:00.000Z';
    const cutOff = fleet({}, false, { state: 'unreachable', since, reason: 'etcd did not answer (http://127.0.0.1:2379): 14 UNAVAILABLE' });
    expect(await poolRoute(jobDir, 'work', { fleet: cutOff, log: () => undefined })).toEqual({
      kind: 'wait',
      reason: `no host of fleet f has queue work UP as this host sees it (this host is unreachable since ${since}: etcd did not answer (http://127.0.0.1:2379): 14 UNAVAILABLE)`,
    });
    expect(await poolRoute(jobDir, 'work', { fleet: fleet({ a: 'PAUSE' }, false), log: () => undefined })).toEqual({
      kind: 'wait',
      reason: 'no host of fleet f has queue work UP as this host sees it (etcd does not answer this host now)',
    });
    // A host refused its name still reads the fleet from etcd: nothing to add.
    const refused = fleet({ a: 'PAUSE' }, true, { state: 'refused', since, reason: 'the name is held' });
    expect(await poolRoute(jobDir, 'work', { fleet: refused, log: () => undefined })).toEqual({ kind: 'wait', reason: 'no host of fleet f has queue work UP' });
    const noFleet = () => Promise.resolve({ ok: false as const, code: 'RQ_ERR_NO_FLEET' as const, text: 'no fleet', raw: null });
    expect(await poolRoute(jobDir, 'work', { fleet: noFleet, log: () => undefined })).toEqual({ kind: 'fail', reason: 'no fleet' });
    fs.writeFileSync(path.join(jobDir, RELAY_HOST_FILE), 'not json');
    expect(await poolRoute(jobDir, 'work', deps({ b: 'UP' }))).toMatchObject({ host: 'b' });
    await markCommitSent(jobDir);
    // A commit marker with no far copy named pins nothing.
    expect(await poolRoute(jobDir, 'work', deps({ c: 'UP' }))).toMatchObject({ host: 'c' });
  });

  it('poolJob: a host up in the fleet gets the message with the fleet credentials; one that is not is only asked, and they are not even read', async () => {
    let asked = 0;
    const credential = () => (asked++, Promise.resolve({ ok: true as const, value: { user: 'rq-fleet', password: 'pw' }, raw: null }));
    const up = await poolRoute(jobDir, 'work', deps({ a: 'UP' }));
    if (up.kind !== 'host') throw new Error('no host');
    const job = await poolJob(jobDir, up, credential, () => undefined, 'work');
    expect([job.authorization, job.askOnly, asked]).toEqual([`Basic ${Buffer.from('rq-fleet:pw').toString('base64')}`, undefined, 1]);
    const gone = await poolJob(jobDir, { ...up, member: false }, credential, () => undefined, 'work');
    expect([gone.authorization, gone.askOnly, asked]).toEqual([undefined, 'a is not up in the fleet now', 1]);
  });
});
