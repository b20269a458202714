// The kill -9 matrix: while 2,000 messages are enqueued (HTTP and queue socket) and drained, SIGKILL the
// work queue, rq-mgr, the web, a running script, the timers daemon and the relay queue at seeded moments; afterwards every
// acknowledged message is done exactly once (relayed ones once on the far host too), nothing is stuck, and no message ever
// had two live runs at once.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { queuePaths, rootPaths } from '../../src/config/paths.js';
import { queueCommand, rq2Command } from '../../src/ipc/rq1.js';
import { alive } from '../helpers/process-groups.js';
import { waitFor } from '../helpers/rq-root.js';
import { seededRandom } from '../helpers/seeded-random.mjs';
import { Host } from '../relay/hosts.js';
import { linkTimer } from '../timers/timers-proc.js';

// The relay's soft-fail back-off scaled down (docs/relay.md), inherited by both rq-mgrs.
process.env.RQ_RELAY_BACKOFF_SCALE = '0.02';

const BIG = process.env.RQ_CHAOS_BIG === '1';
/** Acknowledged messages to reach: 2,000 in CI, 10,000 with RQ_CHAOS_BIG=1. */
const TOTAL = BIG ? 10_000 : 2_000;
/** Rounds of the matrix (each kind once per round, in a seeded order): 1 in CI, 4 with RQ_CHAOS_BIG=1, or RQ_CHAOS_ROUNDS. */
const ROUNDS = Number(process.env.RQ_CHAOS_ROUNDS || (BIG ? 4 : 1));
/** The share of messages sent to the far host through the relay (a relay run is a Node process: ~10/s). */
const RELAY_SHARE = 0.05;
const KINDS = ['queue', 'mgr', 'web', 'script', 'timers', 'relay'] as const;
type Kind = (typeof KINDS)[number];

const rnd = seededRandom();

/**
 * The work queues' script: records each start and end of a run (`>>` of one short line is one atomic append) and holds
 * an exclusive flock on the message's lock file while it lives, so a second live run of one message records `overlap`.
 * `sleep` does not inherit the lock's fd: a SIGKILLed script lets go of it at once, whatever it left behind.
 */
const SCRIPT = `#!/bin/bash
id=$RQ_MSG_ID
exec 9>>"$KM_LOCKS/$id"
flock -n 9 || echo "overlap $id $$" >> "$KM_RECORD"
echo "start $id $$" >> "$KM_RECORD"
sleep "\${RQ_PARAM1:-0}" 9>&-
echo "end $id $$" >> "$KM_RECORD"
echo "done ok" >&3
`;

let dir = '';
let A: Host;
let B: Host;

function workQueue(name: string) {
  return {
    script: path.join(dir, 'record.sh'),
    num_workers: 4,
    env_vars: { KM_RECORD: path.join(dir, `${name}.rec`), KM_LOCKS: path.join(dir, `${name}-locks`) },
    // A SIGKILLed script is a failed run (docs/queue-scripts.md): retried after 0.1 s, never sent to err. A crash of the
    // queue or rq-mgr is an interruption, not a failure: max_interrupts only keeps a run of many kills from reaching err.
    extra: { retry: { max_retries: 50, backoff_base: 0.1, min_retry_delay: 0, max_retry_delay: 0.5, retry_jitter: 0 }, kill_grace: 2, max_interrupts: 1000 },
  };
}

beforeAll(async () => {
  dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-killmatrix-'));
  await fsp.writeFile(path.join(dir, 'record.sh'), SCRIPT, { mode: 0o755 });
  for (const h of ['a', 'b']) await fsp.mkdir(path.join(dir, `${h}-locks`));
  [A, B] = await Promise.all([
    Host.start({
      queues: { work: workQueue('a') },
      // rq-install makes the root with env "test": a 1 s period is accepted.
      setup: async (root) => void (await linkTimer(root, 'km.json', { period: 1, msg: { dest: 'work', param1: '0', param2: 'timer' } })),
    }),
    Host.start({ queues: { work: workQueue('b') } }),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([A?.stop(), B?.stop()]);
  if (dir) await fsp.rm(dir, { recursive: true, force: true });
});

// ---- what the producers were told ----------------------------------------------------------------------------------

interface Ledger {
  /** marker → where it went ('work' on A, or 'relay' from A to B's work). */
  acked: Map<string, 'work' | 'relay'>;
  /** Creates whose answer was not ok (refused, lost, 202): each may exist once or not at all. */
  unacked: Map<string, 'work' | 'relay'>;
  viaHttp: number;
  viaSocket: number;
  failures: string[];
}

const ledger: Ledger = { acked: new Map(), unacked: new Map(), viaHttp: 0, viaSocket: 0, failures: [] };
let nextMarker = 0;
/** Most runs sleep 0–30 ms, 1 % of them 0.5–1.5 s. */
const sleepParam = () => (rnd.next() < 0.01 ? 0.5 + rnd.int(1001) / 1000 : rnd.int(31) / 1000).toFixed(3);

function newMessage(): { marker: string; target: 'work' | 'relay'; fields: Record<string, unknown> } {
  const marker = `km${nextMarker++}`;
  const target = rnd.next() < RELAY_SHARE ? 'relay' : 'work';
  const dest = target === 'relay' ? B.url('work') : 'work';
  return { marker, target, fields: { dest, param1: sleepParam(), param2: marker } };
}

const enough = () => ledger.acked.size >= TOTAL;

function note(failure: string): void {
  if (ledger.failures.length < 20) ledger.failures.push(failure);
}

/** POST /q/<q>/new_message, one message a request; acknowledged only on 200 ["ok", <id>]. */
async function httpProducer(): Promise<void> {
  while (!enough()) {
    const m = newMessage();
    let ok = false;
    try {
      const res = await fetch(`${A.base}/q/${m.target}/new_message`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ x_format: 'json', mesg: JSON.stringify(m.fields) }).toString(),
        signal: AbortSignal.timeout(15_000),
      });
      const body = await res.text();
      ok = res.status === 200 && JSON.parse(body)[0] === 'ok';
      if (!ok) note(`http ${res.status} ${body.slice(0, 120)}`);
    } catch (err) {
      note(`http ${(err as Error).message}`);
    }
    if (ok) {
      ledger.acked.set(m.marker, m.target);
      ledger.viaHttp++;
    } else {
      ledger.unacked.set(m.marker, m.target);
      // Wait for the web (and its queues) to answer again rather than spinning through markers.
      await waitFor(async () => (await fetch(`${A.base}/healthz`, { signal: AbortSignal.timeout(5000) })).status === 200, 'A web healthy', 60_000, 50);
    }
  }
}

/** create_message and create_messages (batches of 1–20) on the queue sockets. */
async function socketProducer(): Promise<void> {
  while (!enough()) {
    const batch = Array.from({ length: rnd.next() < 0.3 ? 1 : 1 + rnd.int(20) }, newMessage);
    // One batch goes to one queue: the relay's messages and the work queue's are made apart.
    const byQueue = new Map<'work' | 'relay', typeof batch>();
    for (const m of batch) byQueue.set(m.target, [...(byQueue.get(m.target) ?? []), m]);
    let failed: 'work' | 'relay' | null = null;
    for (const [q, ms] of byQueue) {
      const sock = queuePaths(A.root, q).sock;
      try {
        if (ms.length === 1) {
          const r = (await queueCommand(sock, 'create_message', ms[0].fields, { timeoutMs: 15_000 })) as [string, string];
          if (r[0] === 'ok') {
            ledger.acked.set(ms[0].marker, q);
            ledger.viaSocket++;
          } else {
            ledger.unacked.set(ms[0].marker, q);
            note(`socket ${JSON.stringify(r).slice(0, 120)}`);
            failed = q;
          }
        } else {
          const r = (await queueCommand(sock, 'create_messages', { messages: ms.map((m) => m.fields) }, { timeoutMs: 15_000 })) as [string, [string, string][]];
          if (r[0] !== 'ok') throw new Error(JSON.stringify(r).slice(0, 120));
          r[1].forEach(([head], i) => {
            if (head === 'ok') {
              ledger.acked.set(ms[i].marker, q);
              ledger.viaSocket++;
            } else ledger.unacked.set(ms[i].marker, q);
          });
        }
      } catch (err) {
        for (const m of ms) ledger.unacked.set(m.marker, q);
        note(`socket ${(err as Error).message}`);
        failed = q;
      }
    }
    const down = failed;
    if (down) await waitFor(async () => ((await queueCommand(queuePaths(A.root, down).sock, 'ping', {}, { timeoutMs: 5000 })) as string[])[0] === 'pong', `A ${down} to answer`, 60_000, 50);
  }
}

// ---- observation -------------------------------------------------------------------------------------------------

interface Worker {
  pid: number;
  status: string;
  restarts: number;
}

async function mgrStatus(h: Host): Promise<Record<string, Worker>> {
  return (await h.mgr!.cmd('status'))[1] as Record<string, Worker>;
}

/** The pid rq-mgr's status gives a child, once it is RUNNING with a whole pid above 1. */
async function childPid(h: Host, name: string, not = 0): Promise<number> {
  return waitFor(async () => {
    const w = (await mgrStatus(h))[name];
    return w?.status === 'RUNNING' && Number.isInteger(w.pid) && w.pid > 1 && w.pid !== not && alive(w.pid) ? w.pid : false;
  }, `rq-mgr to run ${name}${not ? ` again (not pid ${not})` : ''}`, 60_000, 50);
}

const timersCmd = (h: Host, command: string) => rq2Command(rootPaths(h.root).timersSock, command, null, { timeoutMs: 5000 });

async function counts(h: Host, q: string): Promise<Record<string, number>> {
  return (await h.q(q, 'num_messages')) as Record<string, number>;
}

interface RunRecord {
  starts: Map<string, number[]>;
  ends: Map<string, number>;
  /** `<id> <pid>` of every end line. */
  endedBy: Set<string>;
  overlaps: string[];
}

/** The recording file: starts (pids) and ends per message id, and any `overlap` line. */
async function readRecord(file: string): Promise<RunRecord> {
  const out: RunRecord = { starts: new Map(), ends: new Map(), endedBy: new Set(), overlaps: [] };
  const text = await fsp.readFile(file, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const [what, id, pid] = line.split(' ');
    if (what === 'start') out.starts.set(id, [...(out.starts.get(id) ?? []), Number(pid)]);
    else if (what === 'end') {
      out.ends.set(id, (out.ends.get(id) ?? 0) + 1);
      out.endedBy.add(`${id} ${pid}`);
    }
    else if (what === 'overlap') out.overlaps.push(line);
  }
  return out;
}

/** A script of A's work queue that is running now: its latest start has no end, it lives, and its environment names the message. */
async function runningScript(timeoutMs: number, only?: string): Promise<{ id: string; pid: number; starts: number }> {
  return waitFor(async () => {
    const rec = await readRecord(path.join(dir, 'a.rec'));
    const open = [...rec.starts].filter(([id, pids]) => pids.length > (rec.ends.get(id) ?? 0) && (only === undefined || id === only));
    for (const [id, pids] of open.reverse()) {
      const pid = pids[pids.length - 1];
      if (!(Number.isInteger(pid) && pid > 1 && alive(pid))) continue;
      const environ = await fsp.readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
      if (environ.split('\0').includes(`RQ_MSG_ID=${id}`)) return { id, pid, starts: pids.length };
    }
    return false;
  }, 'a running script of A/work', timeoutMs, 20);
}

/**
 * One more acknowledged message for A/work that sleeps 3 s and runs next (priority -1000), once it is running: a queue or
 * rq-mgr killed now leaves a script that outlives the restart, so a second run started beside it would show as an overlap.
 */
async function slowRun(): Promise<string> {
  const m = { ...newMessage(), target: 'work' as const };
  const r = (await A.q('work', 'create_message', { ...m.fields, dest: 'work', param1: '3', priority: -1000 })) as string[];
  expect(r[0], 'a slow message').toBe('ok');
  ledger.acked.set(m.marker, 'work');
  ledger.viaSocket++;
  const id = String(r[1]).split('/').pop()!;
  await runningScript(60_000, id);
  return id;
}

/** marker (param2) → how many message dirs under `stateDir` (flat or hashed) carry it. */
async function markersIn(stateDir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const entries = await fsp.readdir(stateDir, { recursive: true }).catch(() => [] as string[]);
  for (const rel of entries.filter((e) => path.basename(e) === 'msg')) {
    const msg = JSON.parse(await fsp.readFile(path.join(stateDir, rel), 'utf8')) as { param2?: string };
    const m = String(msg.param2);
    out.set(m, (out.get(m) ?? 0) + 1);
  }
  return out;
}

// ---- the kills ---------------------------------------------------------------------------------------------------

const kills: Record<Kind, number> = { queue: 0, mgr: 0, web: 0, script: 0, timers: 0, relay: 0 };
const landed: string[] = [];
/** Scripts killed: each message must start again (and still be done once). */
const killedScripts: { id: string; pid: number; starts: number }[] = [];

function sigkill(pid: number, what: string): void {
  if (!(Number.isInteger(pid) && pid > 1)) throw new Error(`refusing to kill ${what}: pid ${pid}`);
  process.kill(pid, 'SIGKILL');
}

/** Kills one component of A and waits until it answers again. */
async function killOne(kind: Kind, phase: string): Promise<void> {
  const t0 = Date.now();
  let detail = '';
  switch (kind) {
    case 'queue':
    case 'relay': {
      const q = kind === 'queue' ? 'work' : 'relay';
      if (kind === 'queue') detail = `slow ${await slowRun()}, `;
      const pid = await childPid(A, q);
      sigkill(pid, `queue ${q}`);
      await childPid(A, q, pid);
      await A.mgr!.waitQueueUp(q, 60_000);
      // num_messages answers once the recovery scan is over.
      await waitFor(async () => (await counts(A, q)).que !== undefined, `${q} recovered`, 60_000, 50);
      detail += `pid ${pid}`;
      break;
    }
    case 'web': {
      const pid = await childPid(A, '[web]');
      sigkill(pid, 'web');
      await childPid(A, '[web]', pid);
      await waitFor(async () => (await fetch(`${A.base}/healthz`)).status === 200, 'A web healthy again', 60_000, 50);
      detail = `pid ${pid}`;
      break;
    }
    case 'timers': {
      const pid = await childPid(A, '[timers]');
      sigkill(pid, 'timers');
      await childPid(A, '[timers]', pid);
      // A timers process fires a timer once at its start: the new one is firing.
      await waitFor(async () => ((await timersCmd(A, 'get_status'))[1] as { sent: number }).sent >= 1, 'the new timers process to fire', 60_000, 50);
      detail = `pid ${pid}`;
      break;
    }
    case 'script': {
      let s: Awaited<ReturnType<typeof runningScript>>;
      for (;;) {
        // Late in the drain nothing may be running: then one more acknowledged message, slow enough to be caught running.
        s = await runningScript(5000).catch(async () => {
          const m = { ...newMessage(), target: 'work' as const };
          const r = (await A.q('work', 'create_message', { ...m.fields, dest: 'work', param1: '2' })) as string[];
          expect(r[0], 'a message for the script kill').toBe('ok');
          ledger.acked.set(m.marker, 'work');
          ledger.viaSocket++;
          return runningScript(60_000);
        });
        try {
          sigkill(s.pid, `script of ${s.id}`);
        } catch (err) {
          // It ended between the look and the kill (its sleep is a few ms): take another.
          if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
          continue;
        }
        const pid = s.pid;
        await waitFor(() => !alive(pid), `script ${pid} to die`, 10_000, 10);
        // A script that wrote its end line had finished (the kill met a zombie, or its last instant): take another.
        if (!(await readRecord(path.join(dir, 'a.rec'))).endedBy.has(`${s.id} ${pid}`)) break;
      }
      // A killed run is a failure, retried (the queue's retry policy) once the que ahead of it is through: checked at the end.
      killedScripts.push(s);
      detail = `pid ${s.pid} of ${s.id}`;
      break;
    }
    case 'mgr': {
      const before = await mgrStatus(A);
      const children = Object.values(before)
        .map((w) => w.pid)
        .filter((p) => Number.isInteger(p) && p > 1);
      const slow = await slowRun();
      const m = A.mgr!;
      const gone = new Promise((r) => m.child.once('exit', r));
      const pid = m.child.pid!;
      sigkill(pid, 'rq-mgr');
      await gone;
      A.mgr = null;
      // Its children see their stdin close and stop; an operator then runs rq-mgr again on the root.
      await waitFor(() => children.every((p) => !alive(p)), 'the old rq-mgr children to exit', 60_000, 50);
      await A.up();
      detail = `slow ${slow}, pid ${pid}, ${children.length} children`;
      break;
    }
  }
  kills[kind]++;
  landed.push(`${kind}@${phase} (${detail}, back in ${Date.now() - t0} ms)`);
}

// ---- the tests ------------------------------------------------------------------------------------------------------

it('the overlap detector: a run of a message whose lock a live process holds records overlap; one after it does not', async () => {
  const locks = path.join(dir, 'probe-locks');
  await fsp.mkdir(locks);
  const record = path.join(dir, 'probe.rec');
  const env = { ...process.env, RQ_MSG_ID: 'probe', RQ_PARAM1: '0', KM_RECORD: record, KM_LOCKS: locks };
  const runScript = () =>
    new Promise<number | null>((resolve) => spawn(path.join(dir, 'record.sh'), [], { env, stdio: ['ignore', 'ignore', 'inherit', 'pipe'] }).once('exit', resolve));
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

it(`kill -9 matrix: ${TOTAL} messages, ${ROUNDS} round(s) of ${KINDS.join(', ')}: each acknowledged message done once, none stuck, no double run`, async () => {
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
      const done = await waitFor(async () => {
        const n = (await counts(A, 'work')).done;
        return n >= k.at * workAcked ? n : false;
      }, `${k.at.toFixed(2)} of the work done`, 120_000, 20);
      await killOne(k.kind, `drain ${done}/${workAcked} done`);
    }

    // The timer fired after its last kill: forget it now so the drain can end.
    await waitFor(async () => ((await timersCmd(A, 'get_status'))[1] as { sent: number }).sent >= 1, 'the timer firing', 30_000, 50);
    await fsp.rm(path.join(A.root, 'timers', 'km.json'));
    await waitFor(async () => !((await timersCmd(A, 'get_timers'))[1] as [string, number][]).some(([n]) => n === 'km'), 'the timer to be forgotten', 30_000, 50);

    let last = '';
    await waitFor(async () => {
      const [w, r, f] = await Promise.all([counts(A, 'work'), counts(A, 'relay'), counts(B, 'work')]);
      last = JSON.stringify({ A_work: w, A_relay: r, B_work: f });
      return w.que + w.run + r.que + r.run + f.que + f.run === 0;
    }, 'both hosts drained', 180_000, 100).catch((err) => {
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
    for (const p of [pa, pr, pb]) for (const s of ['que', 'run'] as const) for (const n of await fsp.readdir(p.state[s])) if (/^\d/.test(n)) left.push(`${p.dir}/${s}/${n}`);

    const problems: string[] = [];
    for (const [marker, target] of ledger.acked) {
      if (target === 'work' && aDone.get(marker) !== 1) problems.push(`acked ${marker} (work) in A/work/done ${aDone.get(marker) ?? 0} times`);
      if (target === 'relay') {
        if (relayed.get(marker) !== 1) problems.push(`acked ${marker} (relay) in A/relay/relayed ${relayed.get(marker) ?? 0} times`);
        if (bDone.get(marker) !== 1) problems.push(`acked ${marker} (relay) in B/work/done ${bDone.get(marker) ?? 0} times`);
      }
    }
    for (const [marker] of ledger.unacked) {
      for (const [where, m] of [['A/work/done', aDone], ['A/relay/relayed', relayed], ['B/work/done', bDone]] as const) {
        if ((m.get(marker) ?? 0) > 1) problems.push(`unacked ${marker} in ${where} ${m.get(marker)} times`);
      }
    }
    for (const [where, m] of [['A/work/done', aDone], ['A/relay/relayed', relayed], ['B/work/done', bDone]] as const) {
      for (const [marker, n] of m) if (marker !== 'timer' && !ledger.acked.has(marker) && !ledger.unacked.has(marker)) problems.push(`${where} holds ${marker} (${n}) that nobody sent`);
    }
    const recA = await readRecord(path.join(dir, 'a.rec'));
    const recB = await readRecord(path.join(dir, 'b.rec'));
    const runs = [...recA.starts.values(), ...recB.starts.values()].reduce((n, s) => n + s.length, 0);
    const reruns = [...recA.starts.values(), ...recB.starts.values()].filter((s) => s.length > 1).length;
    console.log(`${summary()} done: A ${[...aDone.values()].reduce((a, b) => a + b, 0)} (timer ${aDone.get('timer') ?? 0}), relayed ${relayed.size}, B ${bDone.size}; runs ${runs}, messages run more than once ${reruns}; err ${errs.length}; kills: ${landed.join('; ')}`);

    expect(problems.slice(0, 30), why()).toEqual([]);
    expect(errs.map(([m, n]) => `${m} ×${n}`), `messages in err\n${why()}`).toEqual([]);
    expect(left, `messages left in que/run\n${why()}`).toEqual([]);
    expect([...recA.overlaps, ...recB.overlaps], `concurrent runs of one message\n${why()}`).toEqual([]);
    for (const s of killedScripts) expect({ id: s.id, ranAgain: (recA.starts.get(s.id)?.length ?? 0) > s.starts }, why()).toEqual({ id: s.id, ranAgain: true });
    for (const k of KINDS) expect(kills[k], `kills of ${k}\n${why()}`).toBeGreaterThanOrEqual(ROUNDS);
    // Every daemon of both hosts is running at the end.
    for (const h of [A, B]) for (const [name, w] of Object.entries(await mgrStatus(h))) expect({ name, status: w.status }, why()).toEqual({ name, status: 'RUNNING' });
    expect(fs.existsSync(path.join(A.root, 'timers', 'km.json'))).toBe(false);
  } catch (err) {
    console.log(`FAILED ${summary()}\nkills: ${landed.join('; ')}`);
    throw err;
  }
}, BIG ? 1_800_000 : 240_000);
