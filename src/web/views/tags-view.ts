// Tags in the UI (rq-beyond §B9, §B1.11): chips, the message page's tag form and Track toggle, the tag view, the dashboard's tracked list.
import { STATES } from '../../message/states.js';
import { TRACK_TAG } from '../../message/tags.js';
import { MAX_TAG_PAGE, type TagPageQuery, type TaggedRow } from '../tag-lookup.js';
import type { Urls } from '../urls.js';
import { type SafeHtml, html } from './html.js';
import { postButton } from './queue-view.js';
import { tagChip } from './tag-chip.js';

/** The message page's Tags card: chips, the Track/Untrack toggle and `#tag-form` (add and remove, comma-separated). */
export function messageTagsView(tags: readonly string[], q: string, id: string, urls: Urls): SafeHtml {
  const action = urls.msg(q, id, '/tags');
  const tracked = tags.includes(TRACK_TAG);
  const toggle = tracked
    ? postButton(action, 'Untrack', { id: 'btn-untrack', fields: { remove: TRACK_TAG }, cls: 'button small' })
    : postButton(action, 'Track', { id: 'btn-track', fields: { add: TRACK_TAG }, cls: 'button small primary' });
  const chips = tags.length ? tags.map((t) => tagChip(t, urls)) : html`<span class="muted" id="tags-empty">none</span>`;
  return html`<section class="card" id="tags-section"><div class="card-head"><h3>Tags</h3>${toggle}</div>
  <div class="tag-chips" id="tag-chips">${chips}</div>
  <form id="tag-form" class="tag-form" method="post" action="${action}">
    <label for="tag-add">add</label><input type="text" id="tag-add" name="add" placeholder="nightly,customer:42" autocomplete="off">
    <label for="tag-remove">remove</label><input type="text" id="tag-remove" name="remove" autocomplete="off">
    <button type="submit" class="button small" id="btn-tags">Update tags</button>
  </form></section>`;
}

export interface TagViewData {
  tag: string;
  /** The queue the view is about; undefined: every queue. */
  queue?: string;
  total: number;
  messages: TaggedRow[];
  page: TagPageQuery;
  unavailable: string[];
  gone: string[];
}

function rows(messages: readonly TaggedRow[], urls: Urls, withQueue: boolean): SafeHtml[] {
  return messages.map(
    (m) => html`<tr data-ref="${m.queue}/${m.msg_id}">${withQueue ? html`<td class="queue"><a href="${urls.queue(m.queue)}">${m.queue}</a></td>` : ''}
<td class="msg"><a class="msg-link" href="${urls.msg(m.queue, m.msg_id)}">${m.msg_id}</a></td><td class="state">${m.state}</td><td class="status">${m.status}</td>
<td class="num">${m.priority}</td><td class="tagged-at"><time datetime="${m.tagged_at}">${m.tagged_at}</time></td></tr>`,
  );
}

function pager(d: TagViewData, urls: Urls): SafeHtml {
  const { offset, limit, state } = d.page;
  const at = (o: number) => {
    const base = urls.tag(d.tag, d.queue);
    const query = new URLSearchParams({ ...(state ? { state } : {}), offset: String(o), limit: String(limit) }).toString();
    return `${base}${base.includes('?') ? '&' : '?'}${query}`;
  };
  const prev = offset > 0 ? html`<a class="button small" id="tagged-prev" href="${at(Math.max(0, offset - limit))}">newer</a>` : '';
  const canNext = offset + limit < d.total && (d.queue !== undefined || offset + 2 * limit <= MAX_TAG_PAGE);
  const next = canNext ? html`<a class="button small" id="tagged-next" href="${at(offset + limit)}">older</a>` : '';
  return prev || next ? html`<p class="pager">${prev} ${next}</p>` : html``;
}

/** `GET /tags/<tag>` and `GET /q/<q>/tags/<tag>`: the messages with a tag, newest tagging first, with their state. */
export function tagView(d: TagViewData, urls: Urls): SafeHtml {
  const scope = d.queue === undefined ? html`in every queue` : html`in <a href="${urls.queue(d.queue)}" id="tag-queue">${d.queue}</a>`;
  const stateForm = html`<form class="inline tag-state" id="tagged-state-form" method="get" action="${urls.tag(d.tag, d.queue).split('?')[0]}">
  ${d.tag.endsWith('.json') ? html`<input type="hidden" name="x_format" value="html">` : ''}<input type="hidden" name="limit" value="${String(d.page.limit)}">
  <select name="state" id="tagged-state"><option value="">any state</option>${STATES.map((s) => html`<option value="${s}"${d.page.state === s ? html` selected` : ''}>${s}</option>`)}</select>
  <button type="submit" class="button small" id="btn-tagged-state">Show</button></form>`;
  const unavailable = d.unavailable.length ? html`<p class="bad" id="tagged-unavailable">Not answering, left out: ${d.unavailable.join(', ')}</p>` : '';
  const gone = d.gone.length ? html`<p class="muted" id="tagged-gone">No longer exist: ${d.gone.join(', ')}</p>` : '';
  const table = d.messages.length
    ? html`<div class="table-wrap"><table class="grid" id="tagged-table"><thead><tr>${d.queue === undefined ? html`<th>QUEUE</th>` : ''}<th>MESSAGE</th><th>STATE</th><th>STATUS</th><th>PRIORITY</th><th>TAGGED AT</th></tr></thead>
<tbody>${rows(d.messages, urls, d.queue === undefined)}</tbody></table></div>`
    : html`<p class="muted" id="tagged-empty">No messages${d.page.offset ? ' on this page' : ''}.</p>`;
  const cancel =
    d.queue === undefined
      ? ''
      : html`<section class="card" id="cancel-tagged"><h3>Cancel</h3><form class="inline" id="cancel-tagged-form" method="post" action="${urls.queue(d.queue, '/cancel_tagged')}" data-confirm="${`Cancel every prep, queued and running message of ${d.queue} tagged ${d.tag}?`}">
  <input type="hidden" name="tag" value="${d.tag}"><input type="hidden" name="back" value="${urls.tag(d.tag, d.queue)}">
  <label for="cancel-tagged-reason">reason</label> <input type="text" id="cancel-tagged-reason" name="reason" maxlength="1000">
  <button type="submit" class="button danger" id="btn-cancel-tagged">Cancel all tagged ${d.tag}</button></form></section>`;
  return html`<div class="page-head"><h1 id="tag-title">Tag <span class="tag-chip" id="tag-name">${d.tag}</span> ${scope}</h1></div>
<section class="card" id="tagged"><div class="card-head"><h3><span id="tagged-total">${d.total}</span> messages</h3>${stateForm}<a href="${urls.tagJson(d.tag, d.queue)}" id="tagged-json">json</a></div>
${unavailable}${gone}${table}${pager(d, urls)}</section>${cancel}`;
}

/** The dashboard's `#tracked`: tracked messages across queues with their state, redrawn from /tracked.json by main.js. */
export function trackedView(d: { total: number; messages: TaggedRow[]; unavailable: string[] }, urls: Urls): SafeHtml {
  const list = d.messages.length
    ? html`<div class="table-wrap"><table class="grid" id="tracked-table"><thead><tr><th>QUEUE</th><th>MESSAGE</th><th>STATE</th><th>STATUS</th><th>PRIORITY</th><th>TRACKED SINCE</th></tr></thead>
<tbody>${rows(d.messages, urls, true)}</tbody></table></div>`
    : html`<p class="muted" id="tracked-empty">No tracked messages.</p>`;
  const more =
    d.total > d.messages.length
      ? html`<p class="muted" id="tracked-more">${d.total - d.messages.length} more: <a href="${urls.tag(TRACK_TAG)}">all tracked</a></p>`
      : '';
  const unavailable = d.unavailable.length ? html`<p class="bad" id="tracked-unavailable">Not answering: ${d.unavailable.join(', ')}</p>` : '';
  return html`<section class="card" id="tracked" data-refresh="${urls.link('tracked.json')}" data-events="${urls.link('events')}" data-root="${urls.base}">
  <div class="card-head"><h2>Tracked</h2><a href="${urls.tag(TRACK_TAG)}" id="tracked-link">tag view</a></div>
  <div id="tracked-list">${list}${more}${unavailable}</div></section>`;
}
