// The search tests' shared words: a search asked of an in-process queue, the ids of its page, a due an hour ahead.
import type { InProcess } from '../in-process.js';
import { cmd } from '../in-process-session.js';

export const ask = (q: InProcess, arg: unknown) => cmd(q, 'search', arg);
export const ids = (reply: [string, { messages: { msg_id: string }[] }]) => reply[1].messages.map((m) => m.msg_id);

/** A due an hour after the queue's clock, in whole seconds. */
export const later = (q: InProcess) => Math.floor(q.clock.ms / 1000) + 3600;

/** The search index's map of a queue whose index is read: a test removes an entry to stand for a message the build missed. */
export function indexed<E = unknown>(q: InProcess): Map<string, E> {
  const index = (q.queue.stats.search as unknown as { index: { current: Map<string, E> | null } }).index.current;
  if (!index) throw new Error('the search index is not read yet');
  return index;
}
