// Spec §9.2 for the web: the queue a message-level request really goes to, rq_router while its rules file exists.
import fs from 'node:fs';
import path from 'node:path';

/** Queues the router never takes traffic from: the relay and cleaner must keep working while it routes. */
const NOT_ROUTED = new Set(['relay', 'cleaner', 'rq_router']);

/**
 * `rq_router` when `<root>/config/rq_router_rules.rb` exists and `queue` is not exempt, else `queue`.
 * Checked per request (one stat) so that creating or removing the file switches routing at once.
 */
export function routedQueue(root: string, queue: string): string {
  if (NOT_ROUTED.has(queue)) return queue;
  return fs.existsSync(path.join(root, 'config', 'rq_router_rules.rb')) ? 'rq_router' : queue;
}
