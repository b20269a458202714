// Tag lookups for the web (rq-beyond §B9): checked tag and page parameters, and `tagged` fanned out to every queue and merged.
import { RqError, invalidField } from '../errors.js';
import { type QueueTaggedPage, type TaggedEntry, mergeTaggedPages } from '../ipc/tag-lists.js';
import { discoverQueues } from '../mgr/queue-dirs.js';
import { STATES, type State } from '../message/states.js';
import { TAG_EXPECTED, isTag, readTags } from '../message/tags.js';
import type { Params } from './params.js';
import type { WebContext } from './web-context.js';

/** The queue's own limits on a `tagged` page (src/queue/commands/tag-commands.ts). */
export const MAX_TAG_PAGE = 1000;
export const MAX_TAG_OFFSET = 10_000_000;
export const DEFAULT_TAG_PAGE = 25;

/** How long a fan-out waits for one queue before answering without it (`unavailable`). */
export const FANOUT_TIMEOUT_MS = 3000;

export interface TagPageQuery {
  state?: State;
  offset: number;
  limit: number;
}

export type TaggedRow = TaggedEntry & { queue: string };

export interface TaggedEverywhere {
  total: number;
  /** Most recently tagged first, across queues. */
  messages: TaggedRow[];
  /** `<queue>/<id>` of messages this lookup found deleted behind their queue's back (reported once). */
  gone: string[];
  /** Queues that did not answer in time or refused: the answer is without them. */
  unavailable: string[];
}

/** A tag from a path segment or a parameter: 400 naming `field` (the queue's wording) unless it is one. */
export function requireTag(v: unknown, field = 'tag'): string {
  if (v === undefined || v === null || v === '') throw RqError.of('RQ_ERR_LACKING_FIELD', field);
  if (!isTag(v)) throw invalidField(field, TAG_EXPECTED, v);
  return v;
}

/** `add` / `remove` of a tag change: a comma-separated text or an array of tags; undefined when absent or empty. */
export function tagListParam(params: Params, field: 'add' | 'remove'): string[] | undefined {
  const v: unknown = params[field];
  if (v === undefined || v === null || v === '') return undefined;
  const tags = readTags(v, invalidField, field);
  return tags.length ? tags : undefined;
}

function wholeParam(params: Params, field: string, lo: number, hi: number, fallback: number, note = ''): number {
  const v = params[field];
  if (v === undefined || v === '') return fallback;
  const n = typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < lo || n > hi) throw invalidField(field, `a whole number from ${lo} to ${hi}${note}`, v);
  return n;
}

/**
 * `state`, `offset` and `limit` of a tag lookup. Across queues every queue is asked for its first
 * `offset + limit` messages (so the merged window is exact), which the queue caps at 1000.
 */
export function readTagPage(params: Params, acrossQueues: boolean): TagPageQuery {
  const s = params.state;
  let state: State | undefined;
  if (s !== undefined && s !== '') {
    if (typeof s !== 'string' || !(STATES as readonly string[]).includes(s)) throw invalidField('state', `one of ${STATES.join(', ')}`, s);
    state = s as State;
  }
  const limit = wholeParam(params, 'limit', 1, MAX_TAG_PAGE, DEFAULT_TAG_PAGE);
  const offset = acrossQueues
    ? wholeParam(params, 'offset', 0, MAX_TAG_PAGE - limit, 0, ` (offset + limit at most ${MAX_TAG_PAGE} across queues)`)
    : wholeParam(params, 'offset', 0, MAX_TAG_OFFSET, 0);
  return { ...(state ? { state } : {}), offset, limit };
}

/** Every queue: rq-mgr's list, or the queue directories while rq-mgr does not answer. */
async function allQueues(ctx: WebContext): Promise<string[]> {
  try {
    return await ctx.deps.mgr.queues();
  } catch {
    return discoverQueues(ctx.deps.root);
  }
}

function deadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(RqError.of('RQ_ERR_NO_REPLY', `${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * `tagged` on every queue at once, merged most recently tagged first. A queue that is not running,
 * does not answer within FANOUT_TIMEOUT_MS or refuses is left out and named in `unavailable`.
 */
export async function taggedEverywhere(ctx: WebContext, tag: string, page: TagPageQuery): Promise<TaggedEverywhere> {
  const names = [...(await allQueues(ctx))].sort();
  const unavailable: string[] = [];
  const answers = await Promise.all(
    names.map(async (queue): Promise<QueueTaggedPage | null> => {
      try {
        const r = await deadline(
          ctx.queue(queue).tagged({ tag, ...(page.state ? { state: page.state } : {}), offset: 0, limit: page.offset + page.limit }),
          FANOUT_TIMEOUT_MS,
          `queue ${queue}`,
        );
        if (r.ok) return { queue, page: r.value };
        ctx.log.warn({ queue, tag, reply: r.text }, 'tag lookup refused');
      } catch (err) {
        ctx.log.warn({ queue, tag, err: (err as Error).message }, 'tag lookup: queue did not answer');
      }
      unavailable.push(queue);
      return null;
    }),
  );
  // Sorted by name before the (stable) merge, so equal tagging times always come out in one order.
  const pages = answers.filter((a): a is QueueTaggedPage => a !== null);
  return { ...mergeTaggedPages(pages, page.offset, page.limit), unavailable: unavailable.sort() };
}
