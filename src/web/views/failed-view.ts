// Failure groups in the UI (rq-beyond §B15.4): the table of groups with their counts and a requeue per group, and one group's page of err messages.
import type { FailureGroupPage } from '../../ipc/stats-reply.js';
import type { FailedQuery } from '../stats-params.js';
import type { Urls } from '../urls.js';
import { idPart } from './format.js';
import { type SafeHtml, html } from './html.js';
import { postButton } from './queue-view.js';

/** The group's page: its err messages, each linking to its message page. */
export function groupUrl(q: string, group: string, urls: Urls, page = ''): string {
  return urls.queue(q, `/failed?${new URLSearchParams({ group }).toString()}${page}`);
}

/** `requeue_errs {group}` (qless `unfail`) through the queue's POST route, confirmed first; `back` is where the flash shows. */
export function requeueGroupButton(q: string, group: string, count: number, urls: Urls, back: string): SafeHtml {
  return postButton(urls.queue(q, '/requeue_errs'), 'Requeue group', {
    id: `btn-requeue-group-${idPart(group)}`,
    cls: 'button small requeue-group',
    fields: { group, back },
    confirm: `Run the ${count} err messages of group ${group} of ${q} again?`,
  });
}

/** Group → count, most first, then by name (code points: the same order on every server); each group links to its messages. */
export function groupsTable(q: string, groups: Record<string, number>, urls: Urls, back: string): SafeHtml {
  const list = Object.entries(groups).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (list.length === 0) return html`<p class="muted" id="failure-groups-empty">No err messages.</p>`;
  const rows = list.map(
    ([g, n]) =>
      html`<tr data-group="${g}"><td class="group"><a class="group-link" href="${groupUrl(q, g, urls)}">${g}</a></td><td class="num count">${n}</td><td>${requeueGroupButton(q, g, n, urls, back)}</td></tr>`,
  );
  return html`<div class="table-wrap"><table class="grid" id="failure-groups"><thead><tr><th>GROUP</th><th>ERR MESSAGES</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** The card of the stats page (and of `/q/<q>/failed` without a group); null groups: the queue did not answer. */
export function groupsCard(q: string, groups: Record<string, number> | null, urls: Urls, back: string): SafeHtml {
  const body =
    groups === null ? html`<p class="bad" id="failure-groups-error">The queue did not answer: failure groups unknown.</p>` : groupsTable(q, groups, urls, back);
  return html`<section class="card" id="stats-failures"><div class="card-head"><h3>Failure groups <span class="muted small">(err messages now, not acknowledged)</span></h3><a href="${urls.queue(q, '/failed.json')}" id="failed-json">json</a></div>${body}</section>`;
}

function pager(q: string, page: FailureGroupPage, query: FailedQuery, urls: Urls): SafeHtml {
  const at = (offset: number) => groupUrl(q, page.group, urls, `&offset=${offset}&limit=${query.limit}`);
  const prev = query.offset > 0 ? html`<a class="button small" id="group-prev" href="${at(Math.max(0, query.offset - query.limit))}">newer</a>` : '';
  const next = query.offset + query.limit < page.total ? html`<a class="button small" id="group-next" href="${at(query.offset + query.limit)}">older</a>` : '';
  return prev || next ? html`<p class="pager">${prev} ${next}</p>` : html``;
}

/** `GET /q/<q>/failed?group=G`: the group's err messages, newest first, with a requeue of the whole group. */
export function groupView(q: string, page: FailureGroupPage, query: FailedQuery, urls: Urls): SafeHtml {
  const rows = page.messages.map(
    (
      m,
    ) => html`<tr data-msg-id="${m.msg_id}"><td class="msg"><a class="msg-link" href="${urls.msg(q, m.msg_id)}">${m.msg_id}</a></td><td class="outcome">${m.outcome}</td>
<td class="failure">${m.failure ?? ''}</td><td class="text">${m.text ?? ''}</td><td class="at">${m.at ? html`<time datetime="${m.at}">${m.at}</time>` : ''}</td></tr>`,
  );
  const table = rows.length
    ? html`<div class="table-wrap"><table class="grid" id="group-messages"><thead><tr><th>MESSAGE</th><th>OUTCOME</th><th>FAILURE</th><th>TEXT</th><th>AT</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : html`<p class="muted" id="group-empty">No err messages in this group${query.offset ? ' on this page' : ''}.</p>`;
  const requeue = page.total ? requeueGroupButton(q, page.group, page.total, urls, urls.queue(q, '/stats')) : '';
  const json = urls.queue(q, `/failed.json?${new URLSearchParams({ group: page.group, offset: String(query.offset), limit: String(query.limit) }).toString()}`);
  return html`<div class="page-head"><h1 id="group-title">Failure group <code id="group-name">${page.group}</code> of <a href="${urls.queue(q)}">${q}</a></h1>
<a href="${urls.queue(q, '/stats')}" id="group-stats-link">statistics</a></div>
<section class="card" id="failed-group"><div class="card-head"><h3><span id="group-total">${page.total}</span> err messages</h3><span>${requeue} <a href="${json}" id="group-json">json</a></span></div>
${table}${pager(q, page, query, urls)}</section>`;
}
