// The kill -9 matrix's two hosts and what it reads of them: host A (work queue, relay, a 1 s timer) relaying to host B, the recording script, rq-mgr's status, counts, run records and markers.
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { rootPaths } from '../../src/config/paths.js';
import { rq2Command } from '../../src/ipc/rq1.js';
import { alive } from '../helpers/process-groups.js';
import { waitFor } from '../helpers/rq-root.js';
import { seededRandom } from '../helpers/seeded-random.mjs';
import { Host } from '../relay/hosts.js';
import { linkTimer } from '../timers/timers-proc.js';

// The relay's soft-fail back-off scaled down (docs/relay.md), inherited by both rq-mgrs.
process.env.RQ_RELAY_BACKOFF_SCALE = '0.02';

export const BIG = process.env.RQ_CHAOS_BIG === '1';
/** Acknowledged messages to reach: 2,000 in CI, 10,000 with RQ_CHAOS_BIG=1. */
export const TOTAL = BIG ? 10_000 : 2_000;
/** Rounds of the matrix (each kind once per round, in a seeded order): 1 in CI, 4 with RQ_CHAOS_BIG=1, or RQ_CHAOS_ROUNDS. */
export const ROUNDS = Number(process.env.RQ_CHAOS_ROUNDS || (BIG ? 4 : 1));
/** The share of messages sent to the far host through the relay (a relay run is a Node process: ~10/s). */
export const RELAY_SHARE = 0.05;
export const KINDS = ['queue', 'mgr', 'web', 'script', 'timers', 'relay'] as const;
export type Kind = (typeof KINDS)[number];

export const rnd = seededRandom();

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

export let dir = '';
export let A: Host;
export let B: Host;

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

/** Starts both hosts (and the recording script in dir) before the file's tests; stops and removes them after. */
export function killMatrixHosts(): void {
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
}

// ---- observation -------------------------------------------------------------------------------------------------

export interface Worker {
  pid: number;
  status: string;
  restarts: number;
}

export async function mgrStatus(h: Host): Promise<Record<string, Worker>> {
  return (await h.mgr!.cmd('status'))[1] as Record<string, Worker>;
}

/** The pid rq-mgr's status gives a child, once it is RUNNING with a whole pid above 1. */
export async function childPid(h: Host, name: string, not = 0): Promise<number> {
  return waitFor(
    async () => {
      const w = (await mgrStatus(h))[name];
      return w?.status === 'RUNNING' && Number.isInteger(w.pid) && w.pid > 1 && w.pid !== not && alive(w.pid) ? w.pid : false;
    },
    `rq-mgr to run ${name}${not ? ` again (not pid ${not})` : ''}`,
    60_000,
    50,
  );
}

export const timersCmd = (h: Host, command: string) => rq2Command(rootPaths(h.root).timersSock, command, null, { timeoutMs: 5000 });

export async function counts(h: Host, q: string): Promise<Record<string, number>> {
  return (await h.q(q, 'num_messages')) as Record<string, number>;
}

export interface RunRecord {
  starts: Map<string, number[]>;
  ends: Map<string, number>;
  /** `<id> <pid>` of every end line. */
  endedBy: Set<string>;
  overlaps: string[];
}

/** The recording file: starts (pids) and ends per message id, and any `overlap` line. */
export async function readRecord(file: string): Promise<RunRecord> {
  const out: RunRecord = { starts: new Map(), ends: new Map(), endedBy: new Set(), overlaps: [] };
  const text = await fsp.readFile(file, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const [what, id, pid] = line.split(' ');
    if (what === 'start') out.starts.set(id, [...(out.starts.get(id) ?? []), Number(pid)]);
    else if (what === 'end') {
      out.ends.set(id, (out.ends.get(id) ?? 0) + 1);
      out.endedBy.add(`${id} ${pid}`);
    } else if (what === 'overlap') out.overlaps.push(line);
  }
  return out;
}

/** A script of A's work queue that is running now: its latest start has no end, it lives, and its environment names the message. */
export async function runningScript(timeoutMs: number, only?: string): Promise<{ id: string; pid: number; starts: number }> {
  return waitFor(
    async () => {
      const rec = await readRecord(path.join(dir, 'a.rec'));
      const open = [...rec.starts].filter(([id, pids]) => pids.length > (rec.ends.get(id) ?? 0) && (only === undefined || id === only));
      for (const [id, pids] of open.reverse()) {
        const pid = pids[pids.length - 1];
        if (!(Number.isInteger(pid) && pid > 1 && alive(pid))) continue;
        const environ = await fsp.readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
        if (environ.split('\0').includes(`RQ_MSG_ID=${id}`)) return { id, pid, starts: pids.length };
      }
      return false;
    },
    'a running script of A/work',
    timeoutMs,
    20,
  );
}

/** marker (param2) → how many message dirs under `stateDir` (flat or hashed) carry it. */
export async function markersIn(stateDir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const entries = await fsp.readdir(stateDir, { recursive: true }).catch(() => [] as string[]);
  for (const rel of entries.filter((e) => path.basename(e) === 'msg')) {
    const msg = JSON.parse(await fsp.readFile(path.join(stateDir, rel), 'utf8')) as { param2?: string };
    const m = String(msg.param2);
    out.set(m, (out.get(m) ?? 0) + 1);
  }
  return out;
}
