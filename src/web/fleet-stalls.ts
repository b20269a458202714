// Which queues wait for fleet slots this host cannot take now (etcd does not answer), from rq-mgr's limit table: what /healthz says of them.
import { limitStatus } from './limit-status.js';
import type { WebContext } from './web-context.js';

/** Queue name → why its waiters do not move; empty when rq-mgr does not answer (its own failure is reported apart). */
export async function fleetStalls(ctx: WebContext): Promise<Map<string, string>> {
  const a = await limitStatus(ctx).catch(() => null);
  if (!a?.ok) return new Map();
  // Queue → the keys its waiters wait for, each once, and why the first of them does not move (one etcd, one reason).
  const stalls = new Map<string, { keys: Set<string>; why: string }>();
  for (const [key, s] of Object.entries(a.value)) {
    if (s.scope !== 'fleet' || !s.stalled) continue;
    for (const w of s.waiting) {
      const stall = stalls.get(w.queue) ?? { keys: new Set<string>(), why: s.stalled };
      stall.keys.add(key);
      stalls.set(w.queue, stall);
    }
  }
  return new Map([...stalls].map(([queue, s]) => [queue, `waits for fleet slots of ${[...s.keys].join(', ')}: ${s.why}`]));
}
