// Waiting for a message to finish (done, err, relayed or deleted) on the queue's own events, for `rq cancel --wait`.
import { isFinished } from '../../message/states.js';
import type { QueueSpool } from '../../spool/queue-spool.js';
import type { QueueEvents } from '../status/queue-events.js';

export type WaitEnd = 'finished' | 'timed out' | 'closing';

/**
 * Resolves `finished` once `id` has left prep, que and run for good (a retry or resend back to the
 * que keeps waiting), `timed out` after `timeoutMs`, `closing` when the queue stops first. It
 * listens first and looks at the disk second, so a move between the two is never missed; memory
 * lags the rename by a few microtasks, the disk does not.
 */
export async function waitFinished(events: QueueEvents, spool: QueueSpool, id: string, timeoutMs: number): Promise<WaitEnd> {
  let settle!: (v: WaitEnd) => void;
  const result = new Promise<WaitEnd>((resolve) => (settle = resolve));
  const onMoved = (m: { id: string; to: string }) => {
    if (m.id === id && isFinished(m.to)) settle('finished');
  };
  const onRemoved = (m: { id: string }) => {
    if (m.id === id) settle('finished');
  };
  const onClosing = () => settle('closing');
  events.on('moved', onMoved);
  events.on('removed', onRemoved);
  events.on('closing', onClosing);
  const timer = setTimeout(() => settle('timed out'), timeoutMs);
  try {
    const now = await spool.locate(id);
    if (now === null || isFinished(now)) settle('finished');
    return await result;
  } finally {
    clearTimeout(timer);
    events.off('moved', onMoved);
    events.off('removed', onRemoved);
    events.off('closing', onClosing);
  }
}
