// A queue's live state as the status routes and pages show it: status, uptime, counts, pid.
import fs from 'node:fs/promises';
import { queuePaths } from '../config/paths.js';
import type { StateCounts } from '../message/states.js';
import type { WebContext } from './web-context.js';

export interface QueueSnapshot {
  name: string;
  /** The queue process answered. */
  alive: boolean;
  /** Why it did not (no reply, refused). */
  error?: string;
  /** UP, PAUSE, DOWN, SCRIPTERROR or DISK FULL. */
  status?: string;
  /** Why a queue in SCRIPTERROR or DISK FULL runs no script (status_detail). */
  reason?: string;
  uptime?: number;
  /** Absent while DOWN (the queue refuses to count then) or dead. */
  counts?: StateCounts;
  pid: number | null;
}

async function readPid(file: string): Promise<number | null> {
  try {
    const n = Number((await fs.readFile(file, 'utf8')).trim());
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** Statuses in which a queue runs no script for a reason it can give. */
const HELD = new Set(['SCRIPTERROR', 'DISK FULL']);

/** Why a queue in SCRIPTERROR or DISK FULL runs no script; asked only then, so a healthy queue costs no extra call. */
export async function heldReason(ctx: WebContext, name: string, status: string): Promise<string | undefined> {
  if (!HELD.has(status)) return undefined;
  const d = await ctx
    .queue(name)
    .statusDetail()
    .catch(() => null);
  return d?.ok ? d.value.reason : undefined;
}

/** Asks the queue (three pipelined commands) for what the dashboard and status formats need. */
export async function snapshotQueue(ctx: WebContext, name: string): Promise<QueueSnapshot> {
  const pid = readPid(queuePaths(ctx.deps.root, name).pidFile);
  try {
    const client = ctx.queue(name);
    const [status, uptime, counts] = await Promise.all([
      client.status(),
      client.uptime(),
      // A DOWN queue answers this with ["fail","status: DOWN"]; that is not an error here.
      client.counts(),
    ]);
    const s = status.ok ? status.value : 'UNKNOWN';
    const reason = await heldReason(ctx, name, s);
    return {
      name,
      alive: true,
      status: s,
      ...(reason ? { reason } : {}),
      uptime: uptime.ok ? uptime.value : undefined,
      counts: counts.ok ? counts.value : undefined,
      pid: await pid,
    };
  } catch (err) {
    return { name, alive: false, error: (err as Error).message, pid: await pid };
  }
}

/** `GET /q/<q>.txt` (spec §9.5, blank lines included). */
export function statusText(s: QueueSnapshot): string {
  if (!s.alive || s.status === 'DOWN' || !s.counts) return `\nstatus: ${s.alive ? s.status : 'DOWN'}\n\n`;
  const c = s.counts;
  return `\nstatus: ${s.status}\n\nuptime: ${s.uptime ?? 0}\n\n\nprep: ${c.prep}\nque: ${c.que}\nrun: ${c.run}\n\ndone: ${c.done}\nerr: ${c.err}\nrelayed: ${c.relayed}\n\n`;
}

/** `GET /q/<q>.json` (spec §9.5: valid JSON with the classic line breaks). */
export function statusJson(s: QueueSnapshot): string {
  const status = JSON.stringify(s.alive ? s.status : 'DOWN');
  if (!s.alive || s.status === 'DOWN' || !s.counts) return `{"status":${status}\n}\n`;
  const c = s.counts;
  return `{"status":${status}\n,"uptime":${s.uptime ?? 0},"prep_size":${c.prep},"que_size":${c.que},"run_size":${c.run},"done_size":${c.done},"err_size":${c.err},"relayed_size":${c.relayed}}\n`;
}
