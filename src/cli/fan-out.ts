// How the rq tool asks every queue of its root at once (`tagged`, `tracked`, `cancel --tag` without --queue): the answers, and the queues that gave none.
import type { Answer } from '../ipc/answer.js';
import type { QueueClient } from '../ipc/queue-client.js';
import { discoverQueues } from '../mgr/queue-dirs.js';
import { mapLimit } from '../spool/map-limit.js';
import { ask, replyLine } from './queue-ask.js';
import type { RqIo } from './rq-commands.js';

/** Queues asked at once: a root may hold hundreds. */
const LANES = 16;

export interface FanOut<T> {
  /** The queues that said ok, in name order. */
  answers: { queue: string; value: T }[];
  /** One line per queue that refused or did not answer, naming it: `queue q: fail status: DOWN`. */
  problems: string[];
}

/**
 * Asks each queue of the root (a directory under queues/ with a readable config.json, as rq-mgr
 * finds them) the same question. A queue that refuses or does not answer is reported, not fatal:
 * the others still answer (and act, for a cancel).
 */
export async function askEvery<T>(root: string, call: (c: QueueClient) => Promise<Answer<T>>): Promise<FanOut<T>> {
  const queues = await discoverQueues(root);
  type Reply = { queue: string; a: Answer<T> } | { queue: string; problem: string };
  const replies = await mapLimit(queues, LANES, async (queue): Promise<Reply> => {
    try {
      return { queue, a: await ask(root, queue, call) };
    } catch (err) {
      // ask's errors name the queue already (`queue not found: q`, `queue q: its process does not answer (…)`).
      return { queue, problem: err instanceof Error ? err.message : String(err) };
    }
  });
  const out: FanOut<T> = { answers: [], problems: [] };
  for (const r of replies) {
    if ('problem' in r) out.problems.push(r.problem);
    else if (r.a.ok) out.answers.push({ queue: r.queue, value: r.a.value });
    else out.problems.push(`queue ${r.queue}: ${replyLine(r.a)}`);
  }
  return out;
}

/** The problems on stderr, one `rq: ` line each; the status word of the summary line: `ok` only when every queue answered ok. */
export function reportProblems(io: RqIo, problems: readonly string[]): 'ok' | 'fail' {
  for (const p of problems) io.stderr(`rq: ${p}`);
  return problems.length ? 'fail' : 'ok';
}
