// How the rq tool asks every queue of its root at once (`queues`, `tagged`, `tracked`, `cancel --tag` without --queue, a message id given alone): the answers, and the queues that gave none.
import { isRqError } from '../errors.js';
import type { Answer } from '../ipc/answer.js';
import type { QueueClient } from '../ipc/queue-client.js';
import { discoverQueues } from '../mgr/queue-dirs.js';
import { mapLimit } from '../spool/map-limit.js';
import { refuseIfMgrDown } from './mgr-down.js';
import { ask, replyLine } from './queue-ask.js';
import type { RqIo } from './rq-command.js';

/** Queues asked at once: a root may hold hundreds. */
const LANES = 16;

export interface FanOut<T> {
  /** Every queue asked, in name order. */
  asked: string[];
  /** The queues that said ok, in name order. */
  answers: { queue: string; value: T }[];
  /** One per queue that refused or did not answer, in name order: its name and the line naming it (`queue q: fail status: DOWN`). */
  failures: { queue: string; problem: string }[];
  /** The failures' lines. */
  problems: string[];
}

/**
 * Asks each queue of the root (a directory under queues/ with a readable config.json, as rq-mgr
 * finds them) the same question. A queue that refuses or does not answer is reported, not fatal:
 * the others still answer (and act, for a cancel). When not one queue process answers, rq-mgr
 * (which runs them) is asked too: if it is down that is the one problem, RQ_ERR_MGR_NOT_RUNNING,
 * rather than a line per queue.
 */
export async function askEvery<T>(root: string, call: (c: QueueClient) => Promise<Answer<T>>): Promise<FanOut<T>> {
  const queues = await discoverQueues(root);
  type Reply = { queue: string; a: Answer<T> } | { queue: string; problem: string; silent: boolean };
  const replies = await mapLimit(queues, LANES, async (queue): Promise<Reply> => {
    try {
      return { queue, a: await ask(root, queue, call) };
    } catch (err) {
      // ask's errors name the queue already (`queue not found: q`, `queue q: its process does not answer (…)`).
      return { queue, problem: err instanceof Error ? err.message : String(err), silent: isRqError(err, 'RQ_ERR_NO_REPLY') };
    }
  });
  if (replies.length > 0 && replies.every((r) => 'silent' in r && r.silent)) await refuseIfMgrDown(root);
  const out: FanOut<T> = { asked: queues, answers: [], failures: [], problems: [] };
  for (const r of replies) {
    const problem = 'problem' in r ? r.problem : r.a.ok ? undefined : `queue ${r.queue}: ${replyLine(r.a)}`;
    if (problem !== undefined) out.failures.push({ queue: r.queue, problem });
    else if ('a' in r && r.a.ok) out.answers.push({ queue: r.queue, value: r.a.value });
  }
  out.problems = out.failures.map((f) => f.problem);
  return out;
}

/** The problems on stderr, one `rq: ` line each; the status word of the summary line: `ok` only when every queue answered ok. */
export function reportProblems(io: RqIo, problems: readonly string[]): 'ok' | 'fail' {
  for (const p of problems) io.stderr(`rq: ${p}`);
  return problems.length ? 'fail' : 'ok';
}
