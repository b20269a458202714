// post_run_webhook (spec §3.6): an observer of finished runs that hands each URL to the webhook queue.
import type { Logger } from 'pino';
import type { Peer } from '../lifecycle/dup.js';
import type { QueueEvents } from '../status/queue-events.js';

/** Subscribes; the returned function resolves once every webhook handed over so far is (or failed to be) queued. */
export function observeWebhooks(events: QueueEvents, d: { peer: Peer; fullId: (id: string) => string; log: Logger }): () => Promise<void> {
  const sending = new Set<Promise<void>>();
  events.on('finished', ({ msg, outcome }) => {
    const urls = msg.post_run_webhook;
    if (outcome.state === 'que' || !Array.isArray(urls) || urls.length === 0) return;
    const body: Record<string, unknown> = { ...msg, msg_id: d.fullId(msg.msg_id), state: outcome.state };
    delete body.status;
    delete body._attachments;
    const p = (async () => {
      for (const url of urls) {
        try {
          const r = await d.peer('webhook').create({ dest: 'webhook', param1: url, param2: JSON.stringify(body) });
          if (!r.ok) d.log.warn({ url, reply: r.raw }, 'webhook queue refused the webhook message');
        } catch (err) {
          d.log.warn({ url, err: (err as Error).message }, 'webhook not sent: no webhook queue answered');
        }
      }
    })();
    sending.add(p);
    void p.finally(() => sending.delete(p));
  });
  return async () => {
    await Promise.all(sending);
  };
}
