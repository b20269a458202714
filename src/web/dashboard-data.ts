// Everything the dashboard shows, gathered from rq-mgr, every queue and the timers process.
import fs from 'node:fs/promises';
import { discoverQueues } from '../mgr/queue-dirs.js';
import { RqError } from '../errors.js';
import { BUILTIN_QUEUE_ORDER, orderQueues } from '../message/queue-order.js';
import { RQ_VERSION } from '../version.js';
import { type QueueSnapshot, snapshotQueue } from './queue-snapshot.js';
import type { WebContext } from './web-context.js';

export interface MgrState {
  up: boolean;
  error?: string;
  pid: number | null;
  uptime?: number;
  version?: string;
  /** The supervisor runs another version than this web process. */
  versionMismatch: boolean;
}

export interface WorkerInfo {
  status: string;
  last_exit: string | null;
}

export interface DashboardQueue extends QueueSnapshot {
  builtin: boolean;
  worker?: WorkerInfo;
}

export type TimerList = { ok: true; timers: { name: string; due: number; in: number }[] } | { ok: false; error: string };

export interface DashboardData {
  mgr: MgrState;
  queues: DashboardQueue[];
  timers: TimerList;
  webVersion: string;
  now: number;
}

async function readPid(file: string): Promise<number | null> {
  const n = Number((await fs.readFile(file, 'utf8').catch(() => '')).trim());
  return Number.isInteger(n) && n > 0 ? n : null;
}

/** rq-mgr's state; `queues` is its worker list (or the queue dirs when it is down). */
export async function mgrState(ctx: WebContext): Promise<{ mgr: MgrState; names: string[]; workers: Record<string, WorkerInfo> }> {
  const pid = await readPid(ctx.paths.mgrPid);
  try {
    const mgr = ctx.deps.mgr;
    const [pong, uptime, version, names] = await Promise.all([mgr.ping(), mgr.uptime(), mgr.version(), mgr.queues()]);
    if (!pong) throw RqError.of('RQ_ERR_PROTOCOL', 'rq-mgr answered ping without pong');
    const workers: Record<string, WorkerInfo> = {};
    // `status` is an rq extension; an older supervisor without it just gives no worker details.
    const st = await mgr.status().catch(() => null);
    if (st?.ok) Object.assign(workers, st.value);
    const v = version.ok ? version.value : undefined;
    return {
      mgr: { up: true, pid, uptime: uptime.ok ? uptime.value : undefined, version: v, versionMismatch: v !== undefined && v !== RQ_VERSION },
      names,
      workers,
    };
  } catch (err) {
    return { mgr: { up: false, error: (err as Error).message, pid, versionMismatch: false }, names: await discoverQueues(ctx.deps.root), workers: {} };
  }
}

export async function timerList(ctx: WebContext): Promise<TimerList> {
  try {
    const reply = await ctx.deps.timers.timers();
    if (!reply.ok) return { ok: false, error: `timers answered ${JSON.stringify(reply.raw).slice(0, 200)}` };
    const now = ctx.now() / 1000;
    const timers = reply.value.map(([name, due]) => ({ name, due, in: Math.round(due - now) })).sort((a, b) => a.due - b.due);
    return { ok: true, timers };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

export async function dashboardData(ctx: WebContext): Promise<DashboardData> {
  const [{ mgr, names, workers }, timers] = await Promise.all([mgrState(ctx), timerList(ctx)]);
  const queues = await Promise.all(
    orderQueues(names).map(async (name): Promise<DashboardQueue> => {
      const worker = workers[name];
      // An ERROR/BACKOFF worker has no process to ask.
      const snap =
        worker && worker.status !== 'RUNNING'
          ? { name, alive: false, error: `${worker.status}${worker.last_exit ? ` (${worker.last_exit})` : ''}`, pid: null }
          : await snapshotQueue(ctx, name);
      return { ...snap, builtin: BUILTIN_QUEUE_ORDER.includes(name), worker };
    }),
  );
  return { mgr, queues, timers, webVersion: RQ_VERSION, now: ctx.now() };
}
