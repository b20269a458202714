// GET /q/<q>: the queue page with its message lists, config and schedules.
import fs from 'node:fs/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { queuePaths } from '../../config/paths.js';
import type { ScheduleEntry } from '../../config/queue-config.js';
import { parseCron } from '../../queue/cron-expression.js';
import { cronKey, cronStateFile, readCronState } from '../../queue/cron-state.js';
import { requireMgr } from '../api/status-api.js';
import type { QueueClient } from '../../ipc/queue-client.js';
import { WAIT_REASONS } from '../../ipc/run-lists.js';
import { snapshotQueue } from '../queue-snapshot.js';
import { type QueItem, type QueuePageData, type RelayedItem, type RunItem, type Schedule, queueView } from '../views/queue-view.js';
import type { WaitingCounts } from '../views/waiting-view.js';
import type { WebContext } from '../web-context.js';

const LIST_LIMIT = 50;
const QUE_LIMIT = 20;
/** How many waiting messages of one reason the queue page counts; past it the count reads `N+`. */
const WAITING_CAP = 1000;

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function pairs(v: unknown): [string, unknown][] {
  return Array.isArray(v) ? v.filter((x): x is [string, unknown] => Array.isArray(x) && typeof x[0] === 'string') : [];
}

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
    const filterRaw = (req.query as Record<string, unknown>).filter;
    const filter = typeof filterRaw === 'string' ? filterRaw : '';
    const [snap, configText] = await Promise.all([snapshotQueue(ctx, q), fs.readFile(queuePaths(ctx.deps.root, q).configFile, 'utf8').catch(() => null)]);
    let config: unknown = null;
    let pretty = configText;
    try {
      config = configText === null ? null : JSON.parse(configText);
      pretty = JSON.stringify(config, null, 2);
    } catch {
      // shown as it is
    }
    const data: QueuePageData = { name: q, snap, configText: pretty, schedules: await schedulesOf(config, queuePaths(ctx.deps.root, q).dir, ctx.now()), filter, prep: [], que: [], run: [], done: [], err: [], errack: [], relayed: [], now: ctx.now() };
    if (snap.alive && snap.status !== 'DOWN') {
      const client = ctx.queue(q);
      const ask = (state: string, extra: { limit?: number; filter?: string } = {}) =>
        client.list(state, extra).then(
          (a) => (a.ok ? a.value : []),
          () => [],
        );
      const [prep, que, run, done, err, errack, relayed, tags, waiting] = await Promise.all([
        ask('prep', { limit: LIST_LIMIT }),
        ask('que', { limit: QUE_LIMIT }),
        ask('run', { limit: LIST_LIMIT }),
        q === 'relay' ? [] : ask('done', filter ? { limit: LIST_LIMIT, filter } : { limit: LIST_LIMIT }),
        ask('err'),
        ask('errack'),
        ask('relayed', { limit: LIST_LIMIT }),
        client.tags().then(
          (a) => (a.ok ? a.value : {}),
          () => ({}),
        ),
        waitingCounts(client),
      ]);
      data.tags = tags;
      data.waiting = waiting;
      data.prep = strings(prep);
      data.que = pairs(que).map(([id, due]): QueItem => ({ id, due: due as number | string }));
      data.run = pairs(run).map(([id, status]): RunItem => ({ id, status: String(status) }));
      data.done = strings(done);
      data.err = strings(err);
      data.errack = strings(errack);
      data.relayed = strings(relayed).map((id): RelayedItem => ({ id }));
      // Destinations and relay targets need each message; only relay pages show them.
      const details = async (items: { id: string; dest?: string; status?: string }[]) =>
        Promise.all(
          items.map(async (m) => {
            const r = await client.get(m.id).catch(() => null);
            if (r?.ok) {
              m.dest = String(r.value.dest ?? '');
              m.status = String(r.value.status ?? m.status ?? '');
            }
          }),
        );
      if (q === 'relay') await Promise.all([details(data.que), details(data.run)]);
      await Promise.all(
        data.relayed.map(async (m) => {
          const r = await client.messageStatus(m.id).catch(() => null);
          const status = r?.ok ? r.value.status : '';
          m.url = /^relayed - (https?:\/\/\S+)$/.exec(status)?.[1];
        }),
      );
    }
    return ctx.page(req, reply, queueView(data, ctx.urls), { queue: q, scripts: ['main.js', 'queue.js'] });
  };
}
