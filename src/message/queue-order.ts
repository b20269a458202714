// The one order every listing of queues uses (the dashboard and /dashboard.json, /q.json and /q.txt, rq queues): the user's queues by name, then the built-ins.

/** The built-in queues rq-install links, in the order the classic dashboard showed them. */
export const BUILTIN_QUEUE_ORDER = ['debug', 'relay', 'cleaner', 'webhook', 'rq_router'];

/**
 * The user's queues sorted by name (JavaScript string order, UTF-16 code units, as discoverQueues
 * lists them), then the built-ins present, in their classic order: a user's own queues come first.
 */
export function orderQueues(names: readonly string[]): string[] {
  const user = names.filter((n) => !BUILTIN_QUEUE_ORDER.includes(n)).sort();
  return [...user, ...BUILTIN_QUEUE_ORDER.filter((b) => names.includes(b))];
}
