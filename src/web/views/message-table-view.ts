// The queue page's message list: state tabs with counts, the filter form, one page of rows (checkboxes for bulk actions) and the pager.
import type { Urls } from '../urls.js';
import { type ListFilter, LIST_SORTS, LIST_STATES, type ListState, PAGE_SIZES, filterParams, queryString } from '../list-params.js';
import type { ListCounts, ListPage, ListRow } from '../message-list.js';
import { type SafeHtml, html } from './html.js';
import { relativeTime } from './format.js';
import { postButton } from './post-button.js';
import { isoTime } from '../../message/iso-time.js';

export interface MessageTableData {
  name: string;
  filter: ListFilter;
  counts: ListCounts;
  /** Null when the queue process cannot be asked (the counts may still be known). */
  page: ListPage | null;
  /** Why there is no page. */
  problem?: string;
  /** Epoch ms the page is drawn at: a queued row's due reads relative to it. */
  now: number;
}

const TAB_LABELS: Record<ListState, string> = { prep: 'PREP', que: 'QUE', run: 'RUN', done: 'DONE', err: 'ERR', relayed: 'RELAYED', acked: 'ACKED' };
const n = (x: number) => x.toLocaleString('en-US');

export function utcTime(ms: number | null): SafeHtml {
  if (ms === null) return html`<span class="muted">-</span>`;
  const iso = isoTime(ms);
  return iso === null ? html`${String(ms / 1000)}` : html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')}</time>`;
}

/** A queued message's due in words ("in 5 mins", "3 secs ago", never "in -3"), the UTC time on hover. */
function dueTime(ms: number, now: number): SafeHtml {
  const iso = isoTime(ms);
  if (iso === null) return utcTime(ms);
  return html`<time datetime="${iso}" title="${iso.slice(0, 19).replace('T', ' ')} UTC">${relativeTime((ms - now) / 1000)}</time>`;
}

/** `350 ms`, `4.2 s`, `3m 20s`, `2h 5m`. */
export function runTime(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return s < 3600 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** The time of all its runs; the last run's in the title when there were more. */
function durationCell(r: ListRow): SafeHtml {
  const title = r.attempts > 1 && r.duration_ms !== null ? `${r.attempts} runs; the last ${runTime(r.duration_ms)}` : '';
  return html`<td class="num duration"${title ? html` title="${title}"` : ''}>${runTime(r.total_ms)}</td>`;
}

function tabs(d: MessageTableData, urls: Urls): SafeHtml {
  const c = d.counts.counts;
  const countOf = (s: ListState) => (c ? (s === 'acked' ? c.err_acked : c[s]) : null);
  const total = c ? LIST_STATES.reduce((sum, s) => sum + (countOf(s) ?? 0), 0) : null;
  const tab = (key: string, label: string, count: number | null, state: ListState | undefined) => {
    const href = urls.queue(d.name) + queryString(filterParams(d.filter, { state, offset: 0 }));
    const current = d.filter.state === state;
    return html`<a class="state-tab${current ? ' current' : ''}" id="col-${key}" href="${href}"${current ? html` aria-current="page"` : ''}>${label} <span class="badge" id="count-${key}">${count === null ? '-' : n(count)}</span></a>`;
  };
  const source = d.counts.source === 'directories' ? html`<span class="muted" id="counts-source">counted from the queue's directories</span>` : '';
  return html`<nav class="state-tabs" id="state-tabs">${tab('all', 'ALL', total, undefined)}${LIST_STATES.map((s) => tab(s, TAB_LABELS[s], countOf(s), s))}${source}</nav>`;
}

function filterForm(d: MessageTableData, urls: Urls): SafeHtml {
  const f = d.filter;
  const iso = (ms: number | undefined) => (ms === undefined ? '' : new Date(ms).toISOString().slice(0, 19));
  const options = <T extends string | number>(values: readonly T[], current: T, label: (v: T) => string = String) =>
    values.map((v) => html`<option value="${String(v)}"${v === current ? html` selected` : ''}>${label(v)}</option>`);
  return html`<form class="list-filter" method="get" action="${urls.queue(d.name)}" id="list-filter">
  ${f.state ? html`<input type="hidden" name="state" value="${f.state}">` : ''}
  <label>text <input type="search" name="filter" id="search-filter" placeholder="any field" value="${f.text ?? ''}"></label>
  <label>created from <input type="text" name="from" id="list-from" placeholder="YYYY-MM-DD" value="${iso(f.from)}" size="19"></label>
  <label>to <input type="text" name="to" id="list-to" placeholder="YYYY-MM-DD" value="${iso(f.to)}" size="19"></label>
  <label>sort <select name="sort" id="list-sort">${options(LIST_SORTS, f.sort)}</select></label>
  <select name="order" id="list-order" aria-label="order">${options(['desc', 'asc'] as const, f.order, (o) => (o === 'desc' ? 'newest first' : 'oldest first'))}</select>
  <label>per page <select name="limit" id="list-limit">${options(PAGE_SIZES, f.limit)}</select></label>
  <button type="submit" class="button" id="btn-search">Search</button>
</form>${f.text !== undefined ? html`<p class="search-note" id="search-note">Search: ${f.text} <a href="${urls.queue(d.name) + queryString(filterParams(f, { text: undefined, offset: 0 }))}" id="search-clear">[X]</a></p>` : ''}`;
}

function rowActions(d: MessageTableData, r: ListRow, urls: Urls): SafeHtml {
  const id = r.acked ? `.${r.msg_id}` : r.msg_id;
  const del = postButton(urls.msg(d.name, id), 'Delete', { fields: { _method: 'delete' }, cls: 'button small danger', confirm: `Delete message ${r.msg_id}?` });
  if (r.state === 'run')
    return postButton(urls.msg(d.name, id), 'Destroy', {
      fields: { _method: 'destroy' },
      cls: 'button small danger',
      confirm: `Destroy message ${r.msg_id}? Its script is killed now.`,
    });
  if (r.state === 'que') return html`${postButton(urls.msg(d.name, id, '/run_now'), 'Run now', { cls: 'button small' })} ${del}`;
  return del;
}

function row(d: MessageTableData, r: ListRow, urls: Urls): SafeHtml {
  const id = r.acked ? `.${r.msg_id}` : r.msg_id;
  const state = r.acked ? 'acked' : r.state;
  return html`<tr data-msg-id="${r.msg_id}" data-state="${state}">
<td><input type="checkbox" class="row-select" name="ids[]" value="${id}" form="bulk-form" aria-label="select ${r.msg_id}"></td>
<td class="id"><a class="msg-link" href="${urls.msg(d.name, id)}">${r.msg_id}</a></td>
<td><span class="state-chip state-${state}">${state}</span></td>
<td>${utcTime(r.created)}</td><td class="due">${r.state === 'que' && r.due !== null ? dueTime(r.due * 1000, d.now) : utcTime(r.due === null ? null : r.due * 1000)}</td>
<td class="num attempts">${r.attempts}</td>${durationCell(r)}
<td class="param">${r.param1 ?? ''}</td><td class="status">${r.status}</td>
<td class="actions">${rowActions(d, r, urls)}</td></tr>`;
}

function pager(d: MessageTableData, page: ListPage, urls: Urls): SafeHtml {
  const f = d.filter;
  const link = (offset: number) => urls.queue(d.name) + queryString(filterParams(f, { offset }));
  const first = page.total === 0 ? 0 : Math.min(f.offset + 1, page.total);
  const last = Math.min(f.offset + f.limit, page.total);
  const lastOffset = page.total === 0 ? 0 : Math.floor((page.total - 1) / f.limit) * f.limit;
  const go = (id: string, label: string, offset: number, enabled: boolean) =>
    enabled
      ? html`<a class="button small" id="${id}" href="${link(offset)}">${label}</a>`
      : html`<span class="button small disabled" id="${id}" aria-disabled="true">${label}</span>`;
  return html`<div class="pager" id="pager"><span id="page-range">${n(first)}–${n(last)} of ${n(page.total)}</span>
${go('page-first', '« first', 0, f.offset > 0)} ${go('page-prev', '‹ previous', Math.max(0, f.offset - f.limit), f.offset > 0)}
${go('page-next', 'next ›', f.offset + f.limit, f.offset + f.limit < page.total)} ${go('page-last', 'last »', lastOffset, f.offset < lastOffset)}</div>`;
}

/** The whole list section; `bulk` is the bulk-action form that the row checkboxes belong to. */
export function messageTableView(d: MessageTableData, urls: Urls, bulk: SafeHtml = html``): SafeHtml {
  const body = (() => {
    if (!d.page) return html`<p class="muted" id="message-rows-empty">${d.problem ?? 'The queue process does not answer: its messages cannot be listed.'}</p>`;
    if (d.page.building !== undefined)
      return html`<p class="muted" id="list-building">The queue is reading its messages for this list (${n(d.page.building)} so far); <a href="">reload</a> in a moment.</p>`;
    const rows = d.page.rows.length
      ? html`<tbody id="message-rows">${d.page.rows.map((r) => row(d, r, urls))}</tbody>`
      : html`<tbody id="message-rows"><tr><td colspan="10" class="muted" id="message-rows-empty">none</td></tr></tbody>`;
    return html`<div class="table-wrap"><table class="grid message-table" id="message-table"><thead><tr>
<th><input type="checkbox" id="select-page" aria-label="select every row of this page"></th><th>ID</th><th>STATE</th><th>CREATED</th><th>DUE</th><th>ATTEMPTS</th><th>DURATION</th><th>PARAM1</th><th>STATUS</th><th></th>
</tr></thead>${rows}</table></div>${pager(d, d.page, urls)}`;
  })();
  // #message-lists is what queue.js swaps when the queue moves: the forms stay outside it, so typing is not lost.
  return html`<section class="card" id="list-card"><h3>Message List</h3>${filterForm(d, urls)}${d.page && d.page.building === undefined ? bulk : ''}<div id="message-lists">${tabs(d, urls)}${body}</div></section>`;
}
