// The kill -9 matrix: while 2,000 messages are enqueued (HTTP and queue socket) and drained, SIGKILL the
// work queue, rq-mgr, the web, a running script, the timers daemon and the relay queue at seeded moments; afterwards every
// acknowledged message is done exactly once (relayed ones once on the far host too), nothing is stuck, and no message ever
// had two live runs at once.
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { waitFor } from '../helpers/rq-root.js';
import {
  A,
  B,
  BIG,
  KINDS,
  type Kind,
  ROUNDS,
  TOTAL,
  counts,
  dir,
  killMatrixHosts,
  markersIn,
  mgrStatus,
  readRecord,
  rnd,
  timersCmd,
} from './kill-matrix-hosts.js';
import { httpProducer, killOne, killedScripts, kills, landed, ledger, socketProducer } from './kill-matrix-load.js';

killMatrixHosts();

it('the overlap detector: a run of a message whose lock a live process holds records overlap; one after it does not', async () => {
  const locks = path.join(dir, 'probe-locks');
  await fsp.mkdir(locks);
  const record = path.join(dir, 'probe.rec');
  const env = { ...process.env, RQ_MSG_ID: 'probe', RQ_PARAM1: '0', KM_RECORD: record, KM_LOCKS: locks };
  const runScript = () =>
    new Promise<number | null>((resolve) =>
      spawn(path.join(dir, 'record.sh'), [], { env, stdio: ['ignore', 'ignore', 'inherit', 'pipe'] }).once('exit', resolve),
    );
  // Another live run: a process holding the message's lock until its stdin closes.
  const holder = spawn('flock', [path.join(locks, 'probe'), 'sh', '-c', 'echo held; exec cat'], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise((r) => holder.stdout!.once('data', r));
  expect(await runScript()).toBe(0);
  holder.stdin!.end();
  await new Promise((r) => holder.once('exit', r));
  expect(await runScript()).toBe(0);
  const rec = await readRecord(record);
  expect(rec.overlaps).toEqual([expect.stringMatching(/^overlap probe \d+$/)]);
  expect(rec.starts.get('probe')).toHaveLength(2);
  expect(rec.ends.get('probe')).toBe(2);
});

it(
  `kill -9 matrix: ${TOTAL} messages, ${ROUNDS} round(s) of ${KINDS.join(', ')}: each acknowledged message done once, none stuck, no double run`,
  async () => {
    const t0 = Date.now();
    // The plan: each kind once per round, shuffled; a seeded share while enqueueing (at a fraction of the acks), the rest while draining (at a fraction of the work done).
    const plan: { kind: Kind; phase: 'enqueue' | 'drain'; at: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const kinds = [...KINDS];
      for (let i = kinds.length - 1; i > 0; i--) {
        const j = rnd.int(i + 1);
        [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
      }
      for (const kind of kinds) plan.push({ kind, phase: rnd.next() < 0.5 ? 'enqueue' : 'drain', at: 0.05 + rnd.next() * 0.8 });
    }
    const enqueueKills = plan.filter((p) => p.phase === 'enqueue').sort((a, b) => a.at - b.at);
    const drainKills = plan.filter((p) => p.phase === 'drain').sort((a, b) => a.at - b.at);
    const summary = () =>
      `kill-matrix seed=${rnd.seed} rounds=${ROUNDS} kills=${JSON.stringify(kills)} acked=${ledger.acked.size} (http ${ledger.viaHttp}, socket ${ledger.viaSocket}, relay ${[...ledger.acked.values()].filter((t) => t === 'relay').length}) unacked=${ledger.unacked.size} ${((Date.now() - t0) / 1000).toFixed(1)} s`;
    const why = () => `${rnd.replay}\n${summary()}\nkills: ${landed.join('; ')}\nproducer failures: ${ledger.failures.join(' | ')}`;

    try {
      let producing = true;
      const producers = Promise.all([httpProducer(), httpProducer(), socketProducer()]).finally(() => (producing = false));
      for (const k of enqueueKills) {
        await waitFor(() => !producing || ledger.acked.size >= k.at * TOTAL, `${k.at.toFixed(2)} of the acks`, 120_000, 10);
        await killOne(k.kind, producing ? `enqueue ${ledger.acked.size}/${TOTAL}` : 'drain (enqueue over)');
      }
      await producers;
      const workAcked = [...ledger.acked.values()].filter((t) => t === 'work').length;
      for (const k of drainKills) {
        const done = await waitFor(
          async () => {
            const n = (await counts(A, 'work')).done;
            return n >= k.at * workAcked ? n : false;
          },
          `${k.at.toFixed(2)} of the work done`,
          120_000,
          20,
        );
        await killOne(k.kind, `drain ${done}/${workAcked} done`);
      }

      // The timer fired after its last kill: forget it now so the drain can end.
      await waitFor(async () => ((await timersCmd(A, 'get_status'))[1] as { sent: number }).sent >= 1, 'the timer firing', 30_000, 50);
      await fsp.rm(path.join(A.root, 'timers', 'km.json'));
      await waitFor(
        async () => !((await timersCmd(A, 'get_timers'))[1] as [string, number][]).some(([n]) => n === 'km'),
        'the timer to be forgotten',
        30_000,
        50,
      );

      let last = '';
      await waitFor(
        async () => {
          const [w, r, f] = await Promise.all([counts(A, 'work'), counts(A, 'relay'), counts(B, 'work')]);
          last = JSON.stringify({ A_work: w, A_relay: r, B_work: f });
          return w.que + w.run + r.que + r.run + f.que + f.run === 0;
        },
        'both hosts drained',
        180_000,
        100,
      ).catch((err) => {
        throw new Error(`${(err as Error).message}; last counts ${last}\n${why()}`);
      });

      // ---- the accounting ----
      const pa = queuePaths(A.root, 'work');
      const pr = queuePaths(A.root, 'relay');
      const pb = queuePaths(B.root, 'work');
      const aDone = await markersIn(pa.state.done);
      const relayed = await markersIn(pr.state.relayed);
      const bDone = await markersIn(pb.state.done);
      const errs = [...(await markersIn(pa.state.err)), ...(await markersIn(pr.state.err)), ...(await markersIn(pb.state.err))];
      const left: string[] = [];
      for (const p of [pa, pr, pb])
        for (const s of ['que', 'run'] as const) for (const n of await fsp.readdir(p.state[s])) if (/^\d/.test(n)) left.push(`${p.dir}/${s}/${n}`);

      const problems: string[] = [];
      for (const [marker, target] of ledger.acked) {
        if (target === 'work' && aDone.get(marker) !== 1) problems.push(`acked ${marker} (work) in A/work/done ${aDone.get(marker) ?? 0} times`);
        if (target === 'relay') {
          if (relayed.get(marker) !== 1) problems.push(`acked ${marker} (relay) in A/relay/relayed ${relayed.get(marker) ?? 0} times`);
          if (bDone.get(marker) !== 1) problems.push(`acked ${marker} (relay) in B/work/done ${bDone.get(marker) ?? 0} times`);
        }
      }
      for (const [marker] of ledger.unacked) {
        for (const [where, m] of [
          ['A/work/done', aDone],
          ['A/relay/relayed', relayed],
          ['B/work/done', bDone],
        ] as const) {
          if ((m.get(marker) ?? 0) > 1) problems.push(`unacked ${marker} in ${where} ${m.get(marker)} times`);
        }
      }
      for (const [where, m] of [
        ['A/work/done', aDone],
        ['A/relay/relayed', relayed],
        ['B/work/done', bDone],
      ] as const) {
        for (const [marker, n] of m)
          if (marker !== 'timer' && !ledger.acked.has(marker) && !ledger.unacked.has(marker)) problems.push(`${where} holds ${marker} (${n}) that nobody sent`);
      }
      const recA = await readRecord(path.join(dir, 'a.rec'));
      const recB = await readRecord(path.join(dir, 'b.rec'));
      const runs = [...recA.starts.values(), ...recB.starts.values()].reduce((n, s) => n + s.length, 0);
      const reruns = [...recA.starts.values(), ...recB.starts.values()].filter((s) => s.length > 1).length;
      console.log(
        `${summary()} done: A ${[...aDone.values()].reduce((a, b) => a + b, 0)} (timer ${aDone.get('timer') ?? 0}), relayed ${relayed.size}, B ${bDone.size}; runs ${runs}, messages run more than once ${reruns}; err ${errs.length}; kills: ${landed.join('; ')}`,
      );

      expect(problems.slice(0, 30), why()).toEqual([]);
      expect(
        errs.map(([m, n]) => `${m} ×${n}`),
        `messages in err\n${why()}`,
      ).toEqual([]);
      expect(left, `messages left in que/run\n${why()}`).toEqual([]);
      expect([...recA.overlaps, ...recB.overlaps], `concurrent runs of one message\n${why()}`).toEqual([]);
      for (const s of killedScripts)
        expect({ id: s.id, ranAgain: (recA.starts.get(s.id)?.length ?? 0) > s.starts }, why()).toEqual({ id: s.id, ranAgain: true });
      for (const k of KINDS) expect(kills[k], `kills of ${k}\n${why()}`).toBeGreaterThanOrEqual(ROUNDS);
      // Every daemon of both hosts is running at the end.
      for (const h of [A, B])
        for (const [name, w] of Object.entries(await mgrStatus(h))) expect({ name, status: w.status }, why()).toEqual({ name, status: 'RUNNING' });
      expect(fs.existsSync(path.join(A.root, 'timers', 'km.json'))).toBe(false);
    } catch (err) {
      console.log(`FAILED ${summary()}\nkills: ${landed.join('; ')}`);
      throw err;
    }
  },
  BIG ? 1_800_000 : 240_000,
);
