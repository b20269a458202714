// What runs and what waits, as the `running` (rq-beyond §B11) and `waiting` (§B2) commands list them.
import type { RunningEntry, WaitReason, WaitingEntry } from '../../ipc/run-lists.js';
import type { DependencyWaits } from '../dependencies/dependency-waits.js';
import type { LimitGate } from '../coordination/limit-gate.js';
import type { MessageIndex } from '../index/message-index.js';
import { attemptOf } from '../rules/retry-policy.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** Running messages, longest running first. */
export function runningList(index: MessageIndex, nowMs: number, limitOf: (id: string) => string | undefined): RunningEntry[] {
  return index
    .allRuns()
    .filter((run) => run.script !== null && !run.released)
    .sort((a, b) => a.startedAt - b.startedAt)
    .map((run) => {
      const beat = Math.max(run.startedAt, run.lastLine ?? 0, run.deadlines?.lastBeat ?? 0);
      const deadline = run.deadlines?.deadline() ?? Infinity;
      return {
        msg_id: run.id,
        pid: run.script!.pid,
        started_at: iso(run.startedAt),
        last_beat: iso(beat),
        silent_s: Math.max(0, nowMs - beat) / 1000,
        deadline: Number.isFinite(deadline) ? iso(deadline) : null,
        heartbeat_timeout: run.deadlines?.heartbeatTimeout ?? null,
        attempt: attemptOf(run.msg),
        ...(limitOf(run.id) === undefined ? {} : { limit: limitOf(run.id) }),
      };
    });
}

/** Queued messages that are not ready: delayed ones by due, those folded into a running message, those waiting on dependencies or for a limit slot; at most `limit`. */
export function waitingList(
  index: MessageIndex,
  parked: { limits: LimitGate; waits: DependencyWaits },
  reason: WaitReason | undefined,
  limit: number,
): WaitingEntry[] {
  const out: WaitingEntry[] = [];
  if (reason === undefined || reason === 'delayed') {
    for (const m of index.delayedInOrder(limit)) out.push({ msg_id: m.msg_id, reason: 'delayed', due: Number(m.due) });
  }
  if (reason === undefined || reason === 'coalesced') {
    for (const m of index.coalescedMessages()) {
      if (out.length >= limit) break;
      out.push({ msg_id: m.msg_id, reason: 'coalesced', into: String(m.dup) });
    }
  }
  if (reason === undefined || reason === 'dependencies') out.push(...parked.waits.waitingList().slice(0, Math.max(0, limit - out.length)));
  if (reason === undefined || reason === 'limit') out.push(...parked.limits.waitingList().slice(0, Math.max(0, limit - out.length)));
  return out.slice(0, limit);
}
