// Waiting, bounded, for a queue process that is starting to answer: a just-created queue (the web's 303), a queue a timer fires at while rq-mgr starts it.
import { setTimeout as delay } from 'node:timers/promises';
import { Doubling } from '../backoff.js';

/** First pause between two pings; it doubles up to MAX_PAUSE_MS. A fresh queue answers within tens of ms. */
const FIRST_PAUSE_MS = 10;
const MAX_PAUSE_MS = 200;

/**
 * Pings until the queue answers or `timeoutMs` passes (or `signal` aborts); true when it answered. rq-mgr answers
 * create_queue once the directory is made and the process spawned, before that process listens:
 * classic clients (and brightroll's tests) read `/q/<q>/config` or post a message right after the
 * redirect. The timers daemon, started beside the queues, holds a delivery the same way. This runs
 * while a queue starts, never on a message's path, so a short backoff between pings is simpler
 * than watching the directory for the socket (which still refuses connections between its bind
 * and its listen).
 */
export async function untilQueueAnswers(ping: () => Promise<boolean>, timeoutMs: number, now: () => number = Date.now, signal?: AbortSignal): Promise<boolean> {
  const deadline = now() + timeoutMs;
  const pauses = new Doubling({ baseMs: FIRST_PAUSE_MS, maxMs: MAX_PAUSE_MS });
  for (;;) {
    try {
      if (await ping()) return true;
    } catch {
      // Not listening yet (no socket file, or refused): the process is still starting.
    }
    const left = deadline - now();
    if (left <= 0 || signal?.aborted) return false;
    // A stopping daemon does not wait out the bound: the abort ends the pause and the wait.
    if ((await delay(Math.min(pauses.next(), left), false, { signal }).catch(() => true)) || signal?.aborted) return false;
  }
}
