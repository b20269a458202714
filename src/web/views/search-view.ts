// The search results page (`GET /search?name=<q>&text=…&x_format=html`): the queue's matching messages in every state, newest first, paged.
import { STATES } from '../../message/states.js';
import type { SearchPage } from '../../ipc/stats-reply.js';
import type { Urls } from '../urls.js';
import { type SafeHtml, html } from './html.js';

export interface SearchViewData {
  queue: string;
  text: string;
  state?: string;
  offset: number;
  limit: number;
  page: SearchPage;
}

function href(d: SearchViewData, urls: Urls, offset: number): string {
  const q = new URLSearchParams({
    name: d.queue,
    text: d.text,
    ...(d.state ? { state: d.state } : {}),
    offset: String(offset),
    limit: String(d.limit),
    x_format: 'html',
  });
  return `${urls.link('search')}?${q}`;
}

export function searchView(d: SearchViewData, urls: Urls): SafeHtml {
  const { messages, total } = d.page;
  const first = total === 0 ? 0 : d.offset + 1;
  const last = d.offset + messages.length;
  const rows = messages.map(
    (
      m,
    ) => html`<tr><td class="msg"><a class="msg-link" href="${urls.msg(d.queue, m.acked ? `.${m.msg_id}` : m.msg_id)}">${m.msg_id}</a></td><td class="state state-${m.state}">${m.state}${m.acked ? ' (acknowledged)' : ''}</td>
<td class="param">${m.fields.param1 ?? ''}</td><td class="src">${m.fields.src ?? ''}</td><td class="outcome">${m.fields.outcome ?? ''}</td></tr>`,
  );
  const prev = d.offset > 0 ? html`<a class="button small" id="search-prev" href="${href(d, urls, Math.max(0, d.offset - d.limit))}">newer</a>` : '';
  const next = last < total ? html`<a class="button small" id="search-next" href="${href(d, urls, last)}">older</a>` : '';
  return html`<div class="page-head"><h1 id="search-title">Search <a href="${urls.queue(d.queue)}" id="search-queue">${d.queue}</a></h1></div>
<section class="card" id="search"><form class="inline" id="search-form" method="get" action="${urls.link('search')}">
  <input type="hidden" name="name" value="${d.queue}"><input type="hidden" name="x_format" value="html">
  <input type="search" name="text" id="search-text" value="${d.text}" placeholder="any field contains…" maxlength="1000">
  <select name="state" id="search-state"><option value="">any state</option>${STATES.map((s) => html`<option value="${s}"${d.state === s ? html` selected` : ''}>${s}</option>`)}</select>
  <button type="submit" class="button small" id="btn-search">Search</button></form>
<p id="search-range">${first}–${last} of <span id="search-total">${total}</span></p>
${messages.length ? html`<div class="table-wrap"><table class="grid" id="search-table"><thead><tr><th>MESSAGE</th><th>STATE</th><th>PARAM1</th><th>SRC</th><th>OUTCOME</th></tr></thead><tbody>${rows}</tbody></table></div>` : html`<p class="muted" id="search-empty">No messages match.</p>`}
${prev || next ? html`<p class="pager">${prev} ${next}</p>` : ''}</section>`;
}
