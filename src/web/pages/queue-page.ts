// GET /q/<q>: the queue page with its paged, filtered message list, config and schedules.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { queuePaths } from '../../config/paths.js';
import type { ScheduleEntry } from '../../config/queue-config.js';
import { parseCron } from '../../queue/cron/cron-expression.js';
import { cronKey, cronStateFile, readCronState } from '../../queue/cron/cron-state.js';
import { requireMgr } from '../api/status-api.js';
import type { QueueClient } from '../../ipc/queue-client.js';
import { WAIT_REASONS } from '../../ipc/run-lists.js';
import { snapshotQueue } from '../queue-snapshot.js';
import { readQueueConfig, withoutSecrets } from '../queue-config-file.js';
import { type QueuePageData, type Schedule, queueView } from '../views/queue-view.js';
import { listFilter } from '../list-params.js';
import { bulkBar } from '../views/bulk-view.js';
import { listCounts, listPage } from '../message-list.js';
import type { WaitingCounts } from '../views/waiting-view.js';
import type { WebContext } from '../web-context.js';

/** How long the page waits for a queue's first read of its messages (about 8 s per 100,000) before saying it is reading. */
const FIRST_READ_WAIT_MS = 2000;
/** How many waiting messages of one reason the queue page counts; past it the count reads `N+`. */
const WAITING_CAP = 1000;

/**
 * `schedule` entries of the queue's config.json (`{"cron": "...", "param1": ...}`) with their next
 * occurrence and, from queues/<q>/cron.json, the last one that got its message.
 */
async function schedulesOf(config: unknown, queueDir: string, now: number): Promise<Schedule[]> {
  const list = (config as { schedule?: unknown } | null)?.schedule;
  if (!Array.isArray(list)) return [];
  const records = await readCronState(cronStateFile(queueDir)).catch(() => []);
  const seen = new Map<string, number>();
  return list
    .filter((s): s is Record<string, unknown> => typeof s === 'object' && s !== null && typeof (s as Record<string, unknown>).cron === 'string')
    .map((s, i) => {
      const entry: ScheduleEntry = { cron: s.cron as string };
      for (const k of ['param1', 'param2', 'param3', 'param4'] as const) if (s[k] !== undefined) entry[k] = String(s[k]);
      const base = cronKey(entry, 0);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      const record = records.find((r) => r.key === cronKey(entry, n));
      const fields = Object.fromEntries(Object.entries(entry).filter(([k]) => k !== 'cron')) as Record<string, string>;
      const out: Schedule = { cron: entry.cron, fields, next: null, last: record?.last ?? null, lastMsg: record?.msg_id ?? null };
      try {
        out.next = parseCron(entry.cron, `schedule[${i}].cron`).nextAfter(now);
      } catch (err) {
        out.error = (err as Error).message;
      }
      return out;
    });
}

/** rq-beyond §B2: queued messages that are not ready, counted per reason (undefined when the queue does not say). */
async function waitingCounts(client: QueueClient): Promise<WaitingCounts | undefined> {
  const lists = await Promise.all(WAIT_REASONS.map((reason) => client.waiting({ reason, limit: WAITING_CAP }).catch(() => null)));
  if (lists.some((a) => !a?.ok)) return undefined;
  const counts = WAIT_REASONS.map((r, i) => {
    const n = lists[i]?.ok ? lists[i].value.length : 0;
    return [r, { n, capped: n >= WAITING_CAP }] as const;
  });
  return Object.fromEntries(counts) as WaitingCounts;
}

export function queuePage(ctx: WebContext) {
  return async function queue(req: FastifyRequest, reply: FastifyReply, name: string) {
    await requireMgr(ctx);
    const q = await ctx.requireQueue(name);
    const filter = listFilter(req.query as Record<string, unknown>);
    // Shown as /config.json serves it: bounded, a JSON object, its secrets left out.
    const [snap, read] = await Promise.all([snapshotQueue(ctx, q), readQueueConfig(ctx.deps.root, q)]);
    const config = read?.config ?? null;
    const answers = snap.alive;
    const client = ctx.queue(q);
    const [counts, listed, tags, waiting] = await Promise.all([
      listCounts(ctx, q, snap),
      // The page does not wait long for a queue's first read of its messages: it says so and the reader reloads.
      answers ? listPage(ctx, q, filter, FIRST_READ_WAIT_MS).catch((err: Error) => ({ ok: false as const, problem: err.message })) : null,
      answers && snap.status !== 'DOWN'
        ? client.tags().then(
            (a) => (a.ok ? a.value : {}),
            () => ({}),
          )
        : {},
      answers && snap.status !== 'DOWN' ? waitingCounts(client) : undefined,
    ]);
    const problem = listed && !listed.ok ? ('refusal' in listed ? String(listed.refusal.raw) : listed.problem) : undefined;
    const now = ctx.now();
    const table = { name: q, filter, counts, page: listed?.ok ? listed.page : null, ...(problem ? { problem } : {}), now };
    const bulk = listed?.ok ? bulkBar(q, filter, listed.page.total, ctx.urls) : undefined;
    const data: QueuePageData = {
      name: q,
      snap,
      configText: config === null ? null : JSON.stringify(withoutSecrets(config), null, 2),
      schedules: await schedulesOf(config, queuePaths(ctx.deps.root, q).dir, now),
      table,
      bulk,
      tags,
      waiting,
      now,
    };
    return ctx.page(req, reply, queueView(data, ctx.urls), { queue: q, scripts: ['main.js', 'queue.js', 'message-table.js'], styles: ['list.css'] });
  };
}
