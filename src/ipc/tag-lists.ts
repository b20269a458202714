// What the queue's `tagged` command answers (rq-beyond §B9.2), and the merge of several queues' answers.
import type { State } from '../message/states.js';

export interface TaggedEntry {
  msg_id: string;
  state: State;
  status: string;
  due: number;
  priority: number;
  /** When the tag was put on the message (ISO 8601): the order of a page, and of a merge across queues. */
  tagged_at: string;
}

export interface TaggedPage {
  /** Messages with the tag (in `state`, when asked); without a state, the index's count, which a lookup may still trim. */
  total: number;
  /** Most recently tagged first. */
  messages: TaggedEntry[];
  /** Ids the lookup found deleted (the cleaner, a delete) and dropped from the index: `expired` of `GET /tracked.json`. */
  gone?: string[];
}

/** One queue's page, as a fan-out over every queue collects it. */
export interface QueueTaggedPage {
  queue: string;
  page: TaggedPage;
}

/**
 * Several queues' pages merged into one, most recently tagged first (`GET /tags/<tag>.json`,
 * `rq tagged` without a queue). Each queue must have been asked for `offset + limit` messages
 * from its offset 0, so that the merged window is exact.
 */
export function mergeTaggedPages(
  pages: readonly QueueTaggedPage[],
  offset: number,
  limit: number,
): { total: number; messages: (TaggedEntry & { queue: string })[]; gone: string[] } {
  const all = pages.flatMap(({ queue, page }) => page.messages.map((m) => ({ ...m, queue })));
  all.sort((a, b) => (a.tagged_at < b.tagged_at ? 1 : a.tagged_at > b.tagged_at ? -1 : 0));
  return {
    total: pages.reduce((n, p) => n + p.page.total, 0),
    messages: all.slice(offset, offset + limit),
    gone: pages.flatMap(({ queue, page }) => (page.gone ?? []).map((id) => `${queue}/${id}`)),
  };
}
