// When a queued message expires (rq-beyond §B4): min(due + max_age, expire_at), message over queue default, and the status that says so.
import type { QueueConfig } from '../../config/queue-config.js';
import type { Message } from '../../message/message.js';
import { idTime } from '../../message/message-id.js';

export interface Deadline {
  /** Epoch ms. */
  at: number;
  /** What set it: `max_age 600s after due`, or `expire_at`. */
  by: string;
}

/**
 * The message's expiry deadline, or null when it has none (the classic case). `max_age` counts from
 * the due, but never from before the message was made: a create stores the due in whole seconds,
 * and a 0.5 s max_age must not be eaten by that rounding.
 */
export function deadlineOf(msg: Message, config: Pick<QueueConfig, 'max_age'>): Deadline | null {
  const maxAge = typeof msg.max_age === 'number' ? msg.max_age : config.max_age;
  const byTime = typeof msg.expire_at === 'number' ? msg.expire_at * 1000 : Infinity;
  // Every enqueue asks: a classic message answers here, before any parsing.
  if (maxAge === undefined && byTime === Infinity) return null;
  const byAge = maxAge === undefined ? Infinity : Math.max((Number(msg.due) || 0) * 1000, idTime(msg.msg_id) ?? 0) + maxAge * 1000;
  return byAge <= byTime ? { at: byAge, by: `max_age ${maxAge}s after due` } : { at: byTime, by: 'expire_at' };
}

/** `EXPIRED - not started by 2026-11-21T16:53:46Z (max_age 600s after due)`. */
export function expiredStatus(d: Deadline): string {
  return `EXPIRED - not started by ${new Date(d.at).toISOString().replace(/\.\d{3}Z$/, 'Z')} (${d.by})`;
}
