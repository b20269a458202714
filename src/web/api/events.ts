// GET /events: every move of every message (or of some queues, tags or one message) as Server-Sent Events, relayed from the queues' live feeds.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RqError, invalidField } from '../../errors.js';
import type { FeedEvent } from '../../ipc/feed-event.js';
import { isMsgId, isValidQueueName } from '../../message/names.js';
import { readTags } from '../../message/tags.js';
import type { Listener } from '../event-hub.js';
import { SseStream } from '../sse-stream.js';
import type { WebContext } from '../web-context.js';

export interface EventFilter {
  /** null: every queue. */
  queues: string[] | null;
  /** Events of messages carrying any of these tags; null: any message. */
  tags: ReadonlySet<string> | null;
  msgId: string | null;
}

/** Proxies close idle streams; a comment line this often keeps one open. */
const KEEP_ALIVE_MS = 25_000;
/** About 4,000 events a client has not read: it is cut, reconnects, and is told it missed some. */
const MAX_PENDING_BYTES = 1024 * 1024;
const RETRY_MS = 2000;

const QUEUE_EXPECTED = 'the name of a queue of this server (several: comma-separated)';
const MSG_ID_EXPECTED = 'a message id like 20261121.1643.46.613.2164022';

/** A list parameter: `a,b`, or Rack's `queue[]=a&queue[]=b`; empty items are skipped, so `?queue=` is no filter. */
function listParam(raw: unknown, field: string, expected: string): string[] {
  if (raw === undefined) return [];
  const items = Array.isArray(raw) ? raw : [raw];
  if (!items.every((v): v is string => typeof v === 'string')) throw invalidField(field, expected, raw);
  return [
    ...new Set(
      items
        .flatMap((v) => v.split(','))
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  ];
}

/** The query of GET /events, each value checked: a refusal names the field, what it takes and what it got. */
export async function readFilter(ctx: WebContext, query: unknown): Promise<EventFilter> {
  const q = (typeof query === 'object' && query !== null ? query : {}) as Record<string, unknown>;
  const queues = listParam(q.queue, 'queue', QUEUE_EXPECTED);
  for (const name of queues) if (!isValidQueueName(name) || !(await ctx.queueExists(name))) throw invalidField('queue', QUEUE_EXPECTED, name);
  const tags = q.tag === undefined ? [] : readTags(q.tag, invalidField, 'tag');
  let msgId: string | null = null;
  if (q.msg_id !== undefined && q.msg_id !== '') {
    if (typeof q.msg_id !== 'string' || !isMsgId(q.msg_id)) throw invalidField('msg_id', MSG_ID_EXPECTED, q.msg_id);
    msgId = q.msg_id;
  }
  return { queues: queues.length ? queues : null, tags: tags.length ? new Set(tags) : null, msgId };
}

/** Does the event pass the filter? Status events concern no message: a tag or msg_id filter leaves them out. */
export function matches(f: EventFilter, ev: FeedEvent): boolean {
  if (f.msgId !== null && ev.msg_id !== f.msgId) return false;
  if (f.tags !== null && !(ev.tags ?? []).some((t) => f.tags!.has(t))) return false;
  return true;
}

export function eventStream(ctx: WebContext) {
  return async function events(req: FastifyRequest, reply: FastifyReply) {
    const filter = await readFilter(ctx, req.query);
    // Gone while the filter was read: its 'close' has fired already, so a slot taken now would never be let go.
    if (req.raw.socket.destroyed) return reply.hijack();
    let sse: SseStream | null = null;
    const listener: Listener = {
      queues: filter.queues,
      event: (ev) => {
        if (matches(filter, ev)) sse?.send(null, ev, `${ev.queue}:${ev.seq}`);
      },
      gap: (queue, reason) => sse?.send('gap', { queue, reason }),
      end: (reason) => sse?.end('end', { reason }),
    };
    reply.header('Retry-After', String(ctx.limits.retryAfterS));
    const slot = ctx.sse.take(null, () => sse?.end('end', { reason: 'the web process is stopping' }));
    const sub = ctx.eventHub.add(listener);
    if (!sub) {
      slot.release();
      throw RqError.of('RQ_ERR_TOO_MANY_STREAMS', ctx.eventHub.size());
    }
    reply.removeHeader('Retry-After');
    const onClose = () => {
      sub.remove();
      slot.release();
    };
    sse = new SseStream(reply, { keepAliveMs: KEEP_ALIVE_MS, maxPendingBytes: MAX_PENDING_BYTES, retryMs: RETRY_MS, log: ctx.log, onClose });
    // An EventSource that reconnects sends the last id it saw; what happened while it was away is not replayed.
    if (req.headers['last-event-id'] !== undefined) sse.send('gap', { queue: null, reason: 'reconnected: events while the stream was down are not replayed' });
    try {
      sse.send('ready', { queues: await sub.ready });
    } catch (err) {
      ctx.log.warn({ err: (err as Error).message }, 'event stream: the queues to follow could not be listed');
      sse.end('end', { reason: `the queues to follow could not be listed: ${(err as Error).message}` });
    }
  };
}
