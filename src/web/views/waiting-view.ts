// Why a queued message is not running (rq-beyond §B2): the message page's reason in words, the queue page's breakdown per reason.
import { isUrlRef } from '../../message/fleet-ref.js';
import { parseFullId } from '../../message/message-id.js';
import { isMsgId, isValidQueueName } from '../../message/names.js';
import { WAIT_REASONS, type WaitReason } from '../../ipc/run-lists.js';
import type { Urls } from '../urls.js';
import { type SafeHtml, html } from './html.js';
import { idText } from './id-text.js';
import { isoTime } from '../../message/iso-time.js';

/** A `<queue>/<id>` ref (or a full id) as a link to its message page on this server; anything else as plain text. */
export function refLink(ref: unknown, urls: Urls): SafeHtml {
  if (typeof ref !== 'string') return html`${JSON.stringify(ref)}`;
  const full = /^https?:\/\//.test(ref) ? parseFullId(ref) : null;
  const slash = ref.indexOf('/');
  const queue = full ? full.queue : ref.slice(0, slash);
  const id = full ? full.id : ref.slice(slash + 1);
  if ((full || slash > 0) && isValidQueueName(queue) && isMsgId(id)) return html`<a class="ref" href="${urls.msg(queue, id)}">${idText(ref)}</a>`;
  return html`${ref}`;
}

/**
 * A ref of `depends` or `dependents` as a link: `<queue>/<id>` to its page here, a full id (of another
 * host of the fleet: one of this host is kept as `<queue>/<id>`) to its page there.
 */
export function dependsLink(ref: string, urls: Urls): SafeHtml {
  return isUrlRef(ref) && parseFullId(ref) ? html`<a class="ref" href="${ref}">${idText(ref)}</a>` : refLink(ref, urls);
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/**
 * get_message's derived `waiting` in words: ready to run; delayed until …; coalesced into …; waiting
 * on N dependencies: …; waiting for a slot of key K, position P (or granted one, starting). Null when there is none to tell.
 */
export function waitingWords(waiting: unknown, urls: Urls): SafeHtml | null {
  if (typeof waiting !== 'object' || waiting === null) return null;
  const w = waiting as Record<string, unknown>;
  switch (w.reason) {
    case 'ready':
      return html`ready to run`;
    case 'delayed': {
      const iso = isoTime(Number(w.due) * 1000);
      return iso === null ? html`delayed` : html`delayed until <time datetime="${iso}">${iso}</time>`;
    }
    case 'coalesced':
      return html`coalesced into ${refLink(w.into, urls)}`;
    case 'dependencies': {
      const refs = strings(w.waiting_on);
      const links = refs.map((r, i) => html`${i ? ', ' : ''}${dependsLink(r, urls)}`);
      return html`waiting on ${refs.length} ${refs.length === 1 ? 'dependency' : 'dependencies'}: ${links}`;
    }
    case 'limit': {
      const key = html`<code class="limit-key">${String(w.key)}</code>`;
      // Position 0: granted, about to start (the dispatcher serves granted messages first).
      return Number(w.position) >= 1 ? html`waiting for a slot of key ${key}, position ${String(w.position)}` : html`granted a slot of key ${key}, starting`;
    }
    default:
      return typeof w.reason === 'string' ? html`${w.reason}` : null;
  }
}

/** How many queued messages wait for each reason; a count at the listing's cap is shown as `N+`. */
export type WaitingCounts = Record<WaitReason, { n: number; capped: boolean }>;

/** The queue page's `#waiting`: a count per reason, each linking to `waiting.json?reason=`. */
export function waitingBreakdownView(counts: WaitingCounts | undefined, q: string, urls: Urls): SafeHtml {
  if (!counts) return html``;
  const items = WAIT_REASONS.map((r) => {
    const { n, capped } = counts[r];
    return html`<li><a id="waiting-${r}" data-reason="${r}" href="${urls.queue(q, `/waiting.json?reason=${r}`)}">${r}</a> <span class="badge" id="waiting-${r}-count">${n}${capped ? '+' : ''}</span></li>`;
  });
  return html`<section class="card" id="waiting"><div class="card-head"><h3>Waiting</h3><a href="${urls.queue(q, '/waiting.json')}" id="waiting-json">json</a></div>
<ul class="waiting-breakdown">${items}</ul></section>`;
}
