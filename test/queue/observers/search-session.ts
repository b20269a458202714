// The search tests' shared words: a search asked of an in-process queue, the ids of its page, a due an hour ahead.
import type { InProcess } from '../in-process.js';
import { cmd } from '../in-process-session.js';

export const ask = (q: InProcess, arg: unknown) => cmd(q, 'search', arg);
export const ids = (reply: [string, { messages: { msg_id: string }[] }]) => reply[1].messages.map((m) => m.msg_id);

/** A due an hour after the queue's clock, in whole seconds. */
export const later = (q: InProcess) => Math.floor(q.clock.ms / 1000) + 3600;
