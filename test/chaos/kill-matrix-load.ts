// The kill -9 matrix's load and kills: producers over HTTP and the queue sockets with the ledger of what each was told, and the SIGKILL of one component of host A at a time, waiting until it answers again.
import path from 'node:path';
import { expect } from 'vitest';
import { queuePaths } from '../../src/config/paths.js';
import { queueCommand } from '../../src/ipc/rq1.js';
import { alive } from '../helpers/process-groups.js';
import { waitFor } from '../helpers/rq-root.js';
import { A, B, type Kind, RELAY_SHARE, TOTAL, childPid, counts, dir, mgrStatus, readRecord, rnd, runningScript, timersCmd } from './kill-matrix-hosts.js';

// ---- what the producers were told ----------------------------------------------------------------------------------

export interface Ledger {
  /** marker → where it went ('work' on A, or 'relay' from A to B's work). */
  acked: Map<string, 'work' | 'relay'>;
  /** Creates whose answer was not ok (refused, lost, 202): each may exist once or not at all. */
  unacked: Map<string, 'work' | 'relay'>;
  viaHttp: number;
  viaSocket: number;
  failures: string[];
}

export const ledger: Ledger = { acked: new Map(), unacked: new Map(), viaHttp: 0, viaSocket: 0, failures: [] };
let nextMarker = 0;
/** Most runs sleep 0–30 ms, 1 % of them 0.5–1.5 s. */
const sleepParam = () => (rnd.next() < 0.01 ? 0.5 + rnd.int(1001) / 1000 : rnd.int(31) / 1000).toFixed(3);

export function newMessage(): { marker: string; target: 'work' | 'relay'; fields: Record<string, unknown> } {
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
export async function httpProducer(): Promise<void> {
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
export async function socketProducer(): Promise<void> {
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
    if (down)
      await waitFor(
        async () => ((await queueCommand(queuePaths(A.root, down).sock, 'ping', {}, { timeoutMs: 5000 })) as string[])[0] === 'pong',
        `A ${down} to answer`,
        60_000,
        50,
      );
  }
}

/**
 * One more acknowledged message for A/work that sleeps 3 s and runs next (priority -1000), once it is running: a queue or
 * rq-mgr killed now leaves a script that outlives the restart, so a second run started beside it would show as an overlap.
 */
export async function slowRun(): Promise<string> {
  const m = { ...newMessage(), target: 'work' as const };
  const r = (await A.q('work', 'create_message', { ...m.fields, dest: 'work', param1: '3', priority: -1000 })) as string[];
  expect(r[0], 'a slow message').toBe('ok');
  ledger.acked.set(m.marker, 'work');
  ledger.viaSocket++;
  const id = String(r[1]).split('/').pop()!;
  await runningScript(60_000, id);
  return id;
}

// ---- the kills ---------------------------------------------------------------------------------------------------

export const kills: Record<Kind, number> = { queue: 0, mgr: 0, web: 0, script: 0, timers: 0, relay: 0 };
export const landed: string[] = [];
/** Scripts killed: each message must start again (and still be done once). */
export const killedScripts: { id: string; pid: number; starts: number }[] = [];

function sigkill(pid: number, what: string): void {
  if (!(Number.isInteger(pid) && pid > 1)) throw new Error(`refusing to kill ${what}: pid ${pid}`);
  process.kill(pid, 'SIGKILL');
}

/** Kills one component of A and waits until it answers again. */
export async function killOne(kind: Kind, phase: string): Promise<void> {
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
