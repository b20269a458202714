// Bulk actions on the queue page: the bar the row checkboxes belong to, the confirmation that says how many messages will change, and the job's progress and summary.
import type { BulkJob } from '../../ipc/bulk-reply.js';
import type { Urls } from '../urls.js';
import { type ListFilter, filterParams } from '../list-params.js';
import { type SafeHtml, html } from './html.js';

export const OP_LABELS: Record<string, string> = { retry: 'Retry (requeue errors)', delete: 'Delete', ack: 'Acknowledge errors', move: 'Move to queue' };
const VERBS: Record<string, string> = { retry: 'retried', delete: 'deleted', ack: 'acknowledged', move: 'moved' };
const n = (x: number) => x.toLocaleString('en-US');

/** The filter's fields as hidden inputs: "all matching" means the list as filtered on the page. */
function filterInputs(f: ListFilter): SafeHtml[] {
  return Object.entries(filterParams(f, { offset: 0 }))
    .filter(([k]) => k !== 'sort' && k !== 'order' && k !== 'limit' && k !== 'offset')
    .map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
}

export function bulkBar(q: string, f: ListFilter, total: number, urls: Urls): SafeHtml {
  return html`<form class="bulk-bar" method="post" action="${urls.queue(q, '/bulk')}" id="bulk-form">${filterInputs(f)}
  <label>with the selected <span id="bulk-selected-count">0</span> or all matching:
  <select name="op" id="bulk-op">${Object.entries(OP_LABELS).map(([v, l]) => html`<option value="${v}">${l}</option>`)}</select></label>
  <input type="text" name="dest" id="bulk-dest" placeholder="queue (for a move)" size="14">
  <button type="submit" class="button" name="scope" value="selected" id="bulk-selected">Selected…</button>
  <button type="submit" class="button" name="scope" value="all" id="bulk-all">All ${n(total)} matching…</button>
</form>`;
}

export interface BulkConfirm {
  queue: string;
  op: string;
  dest?: string;
  count: number;
  /** The form fields to post again with confirm=1. */
  fields: [string, string][];
  scope: 'selected' | 'all';
}

export function bulkConfirmView(c: BulkConfirm, urls: Urls): SafeHtml {
  const what = html`${OP_LABELS[c.op]}${c.dest ? html` <strong>${c.dest}</strong>` : ''}`;
  const hidden = c.fields.map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  const none = c.count === 0;
  return html`<section class="card" id="bulk-confirm"><h2>${what}</h2>
<p id="bulk-count-text">${none ? html`No message of <strong>${c.queue}</strong> can be ${VERBS[c.op]}: nothing will change.` : html`<strong id="bulk-count">${n(c.count)}</strong> ${c.count === 1 ? 'message' : 'messages'} of <strong>${c.queue}</strong> will be ${VERBS[c.op]}${c.scope === 'all' ? ' (every one matching the filter that can be)' : ''}.`}</p>
<form method="post" action="${urls.queue(c.queue, '/bulk')}" id="bulk-confirm-form">${hidden}<input type="hidden" name="confirm" value="1">
${none ? '' : html`<button type="submit" class="button ${c.op === 'delete' ? 'danger' : 'primary'}" id="bulk-confirm-button">${OP_LABELS[c.op]}: ${n(c.count)}</button>`}
<a class="button" id="bulk-cancel" href="${urls.queue(c.queue)}">Cancel</a></form></section>`;
}

export function bulkJobView(q: string, job: BulkJob, urls: Urls, eventsUrl: string): SafeHtml {
  const skipped = Object.entries(job.skipped);
  const pct = job.total ? Math.floor((job.done / job.total) * 100) : 100;
  return html`<section class="card" id="bulk-job" data-job="${job.job}" data-state="${job.state}" data-events="${eventsUrl}"><h2>${OP_LABELS[job.op] ?? job.op}${job.dest ? html` ${job.dest}` : ''}</h2>
<p class="bulk-progress" id="bulk-progress"><progress max="${job.total}" value="${job.done}"></progress> <span id="bulk-done">${n(job.done)}</span> of <span id="bulk-total">${n(job.total)}</span> (${pct}%) · <span id="bulk-state">${job.state}</span></p>
<p id="bulk-summary"><span id="bulk-changed">${n(job.changed)}</span> ${VERBS[job.op] ?? 'changed'}, <span id="bulk-skipped">${n(skipped.reduce((s, [, c]) => s + c, 0))}</span> skipped</p>
${skipped.length ? html`<table class="grid" id="bulk-skips"><thead><tr><th>REASON</th><th>MESSAGES</th><th>FOR EXAMPLE</th></tr></thead><tbody>${skipped.map(([reason, count]) => html`<tr><td>${reason}</td><td>${n(count)}</td><td>${(job.examples[reason] ?? []).join(' ')}</td></tr>`)}</tbody></table>` : ''}
<p><a href="${urls.queue(q)}" id="bulk-back">Back to ${q}</a></p></section>`;
}

export function bulkJobsView(q: string, jobs: BulkJob[], urls: Urls): SafeHtml {
  if (!jobs.length)
    return html`<section class="card" id="bulk-jobs"><p class="muted" id="bulk-jobs-empty">No bulk action since the queue process started.</p></section>`;
  return html`<section class="card" id="bulk-jobs"><table class="grid"><thead><tr><th>JOB</th><th>ACTION</th><th>DONE</th><th>CHANGED</th><th>STATE</th></tr></thead><tbody>${jobs.map(
    (j) =>
      html`<tr><td><a href="${urls.queue(q, `/bulk?job=${encodeURIComponent(j.job)}`)}">${j.job}</a></td><td>${OP_LABELS[j.op] ?? j.op}${j.dest ? ` ${j.dest}` : ''}</td><td>${n(j.done)} of ${n(j.total)}</td><td>${n(j.changed)}</td><td>${j.state}</td></tr>`,
  )}</tbody></table></section>`;
}
