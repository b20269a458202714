// A tag as a chip linking to its view (rq-beyond §B9), shared by the message, queue, tag and dashboard views.
import type { Urls } from '../urls.js';
import { type SafeHtml, html } from './html.js';

/** One tag as a link to its view (every queue, or `queue`'s only), with an optional count. */
export function tagChip(tag: string, urls: Urls, opts: { queue?: string; count?: number } = {}): SafeHtml {
  return html`<a class="tag-chip" data-tag="${tag}" href="${urls.tag(tag, opts.queue)}">${tag}${opts.count === undefined ? '' : html` <span class="tag-count">${opts.count}</span>`}</a>`;
}

/** The queue page's tags: each with its count, linking to the queue's tag view. */
export function queueTagsView(counts: Record<string, number>, q: string, urls: Urls): SafeHtml {
  const list = Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (list.length === 0) return html``;
  return html`<section class="card" id="queue-tags"><h3>Tags</h3><div class="tag-chips">${list.map(([t, n]) => tagChip(t, urls, { queue: q, count: n }))}</div></section>`;
}
