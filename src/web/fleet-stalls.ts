// Which queues wait for fleet slots this host cannot take now (etcd does not answer), from rq-mgr's limit table: what /healthz says of them.
import { limitStatus } from './limit-status.js';
import type { WebContext } from './web-context.js';

/** Queue name → why its waiters do not move; empty when rq-mgr does not answer (its own failure is reported apart). */
export async function fleetStalls(ctx: WebContext): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const a = await limitStatus(ctx).catch(() => null);
  if (!a?.ok) return out;
  for (const [key, s] of Object.entries(a.value)) {
    if (s.scope !== 'fleet' || !s.stalled) continue;
    for (const w of s.waiting) {
      const said = out.get(w.queue);
      out.set(w.queue, said ? `${said}; ${key}` : `waits for fleet slots of ${key}: ${s.stalled}`);
    }
  }
  return out;
}
