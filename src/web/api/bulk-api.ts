// POST /q/<q>/bulk (confirm, then start: Post/Redirect/Get to the job's page) and GET /q/<q>/bulk (a job's progress and summary, or the jobs the queue remembers).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { counted, invalidField, RqError } from '../../errors.js';
import { BULK_OPS, type BulkJob } from '../../ipc/bulk-reply.js';
import { flagValue } from '../../message/flag.js';
import { type PartialReport, partialReply, partialStatus } from '../../ipc/partial-reply.js';
import type { SearchArgs } from '../../ipc/queue-client.js';
import { listFilter, searchArgs } from '../list-params.js';
import type { Params } from '../params.js';
import { textParam } from '../params.js';
import { pathParam } from '../request-params.js';
import { bulkConfirmView, bulkJobView, bulkJobsView } from '../views/bulk-view.js';
import type { WebContext } from '../web-context.js';

const MAX_IDS = 10_000;

/** Whether a JSON client asked only for the count: a value that is not plainly true or false is refused, never read as "do it". */
function dryRun(p: Params): boolean {
  const dry = flagValue(p.dry_run);
  if (dry === undefined) throw invalidField('dry_run', 'true or false (1 or 0, on or off): true only counts the messages', p.dry_run);
  return dry;
}

/** What the form asked: the op, its messages (the selected ids, or the list's filter) and a move's destination; each checked. */
function bulkRequest(p: Params) {
  const op = textParam(p, 'op');
  if (!op) throw RqError.of('RQ_ERR_LACKING_FIELD', 'op');
  if (!(BULK_OPS as readonly string[]).includes(op)) throw invalidField('op', `one of ${BULK_OPS.join(', ')}`, op);
  const scope = textParam(p, 'scope') ?? (p.ids === undefined ? 'all' : 'selected');
  if (scope !== 'all' && scope !== 'selected') throw invalidField('scope', 'one of selected, all', p.scope);
  const dest = textParam(p, 'dest') || undefined;
  const fields: [string, string][] = [['op', op], ['scope', scope], ...(op === 'move' && dest ? [['dest', dest] as [string, string]] : [])];
  if (scope === 'selected') {
    const ids = p.ids;
    if (!Array.isArray(ids) || ids.length === 0) throw invalidField('ids', 'at least one selected message (tick its box)', ids ?? '');
    if (ids.length > MAX_IDS || ids.some((x) => typeof x !== 'string'))
      throw invalidField('ids', `at most ${MAX_IDS} message ids`, counted(ids.length, 'values'));
    for (const id of ids as string[]) fields.push(['ids[]', id]);
    return { op, scope, dest, fields, target: { ids: ids as string[] } };
  }
  const f = listFilter(p as Record<string, unknown>);
  const { state, acked, text, created_from, created_to } = searchArgs(f);
  for (const k of ['state', 'filter', 'from', 'to'] as const) if (typeof p[k] === 'string' && p[k] !== '') fields.push([k, p[k] as string]);
  const filter: SearchArgs = { state, acked, text, created_from, created_to };
  return { op, scope, dest, fields, target: { filter } };
}

const DONE: Record<string, string> = { retry: 'retried', delete: 'deleted', ack: 'acknowledged', move: 'moved' };

/**
 * A job (or the list of jobs) as JSON. A finished job that skipped messages is a partial failure:
 * never a 200, the status of its first skip reason (409 a message in another state, 507 a full
 * disk), `["fail", text, report]` with the job in the report. A running or clean job is the job.
 */
function answerJob(ctx: WebContext, reply: FastifyReply, value: BulkJob | BulkJob[]) {
  if (Array.isArray(value) || value.state !== 'finished' || value.changed === value.total) return ctx.json(reply, value);
  const report: PartialReport & { job: BulkJob } = { total: value.total, done: value.changed, failed: 0, failures: [], job: value };
  for (const [reason, n] of Object.entries(value.skipped)) {
    const ids = value.examples[reason] ?? [];
    const code = value.codes?.[reason];
    for (const id of ids) report.failures.push({ id, reason, ...(code ? { code } : {}) });
    report.failed += n;
    if (ids.length < n) report.failures_cut = true;
  }
  return ctx.json(reply, partialReply(DONE[value.op] ?? 'changed', report), partialStatus(report));
}

export function bulkApi(ctx: WebContext) {
  return {
    async bulk(req: FastifyRequest, reply: FastifyReply) {
      const { p, json } = await ctx.actionParams(req);
      const q = await ctx.requireQueue(pathParam(req, 'q'));
      const r = bulkRequest(p);
      const client = ctx.queue(q);
      const args = { op: r.op, ...r.target, ...(r.op === 'move' ? { dest: r.dest } : {}) };
      if (json) return ctx.answerValue(reply, await client.bulk({ ...args, dry_run: dryRun(p) }));
      if (textParam(p, 'confirm') !== '1') {
        // Nothing changes yet: the page says how many messages will, counted by the queue now.
        const count = await client.bulk({ ...args, dry_run: true });
        if (!count.ok) return ctx.couldNot(reply, count, 'count the messages');
        const c = count.value as { count: number };
        return ctx.page(
          req,
          reply,
          bulkConfirmView({ queue: q, op: r.op, dest: r.dest, count: c.count, fields: r.fields, scope: r.scope as 'all' | 'selected' }, ctx.urls),
          { queue: q, styles: ['list.css'] },
        );
      }
      const started = await client.bulk(args);
      if (!started.ok) return ctx.couldNot(reply, started, `start the bulk ${r.op}`);
      return ctx.redirectTo(req, reply, ctx.urls.queue(q, `/bulk?job=${encodeURIComponent((started.value as BulkJob).job)}`));
    },

    async bulkPage(req: FastifyRequest, reply: FastifyReply) {
      const q = await ctx.requireQueue(pathParam(req, 'q'));
      const query = req.query as Record<string, unknown>;
      const job = typeof query.job === 'string' && query.job !== '' ? query.job : undefined;
      const json = query.x_format === 'json';
      if (json) ctx.markJson(req);
      const r = await ctx.queue(q).bulkStatus(job);
      if (!r.ok) {
        if (json) return ctx.answerJson(reply, r);
        return ctx.notFoundPage(req, reply, r.text);
      }
      if (json) return answerJob(ctx, reply, r.value);
      // bulk.js follows a running job from GET /events (the queue's bulk events) and fetches it again.
      const events = ctx.urls.link(`events?queue=${encodeURIComponent(q)}`);
      const body = Array.isArray(r.value) ? bulkJobsView(q, r.value, ctx.urls) : bulkJobView(q, r.value, ctx.urls, events);
      return ctx.page(req, reply, body, { queue: q, scripts: ['main.js', 'bulk.js'], styles: ['list.css'] });
    },
  };
}
