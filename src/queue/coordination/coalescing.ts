// Coalescing (spec §3.5): which queued messages share a starting message's coalesce params, to ride along and end with it.
import type { QueueConfig } from '../../config/queue-config.js';
import type { Message } from '../../message/message.js';
import { paramKey } from '../index/que-index.js';
import type { MessageIndex } from '../index/message-index.js';

export interface CoalescerDeps {
  index: Pick<MessageIndex, 'queuedWhere'>;
  config: () => QueueConfig;
}

export class Coalescer {
  constructor(private readonly d: CoalescerDeps) {}

  /** The queued messages that fold into `msg` as it starts (none when the queue coalesces nothing). */
  foldable(msg: Message): Message[] {
    const keys = this.d.config().coalesce_params;
    if (!keys.length) return [];
    const key = paramKey(msg, keys);
    return this.d.index.queuedWhere((q) => paramKey(q, keys) === key);
  }
}
