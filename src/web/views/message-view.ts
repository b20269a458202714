// The message page (and its prep variant): summary, every field, attachments, actions, embedded live tail, timeline.
import type { HistoryLine } from '../../ipc/history-line.js';
import type { MessageView } from '../message-files.js';
import type { Urls } from '../urls.js';
import { type SafeHtml, html, safeHref } from './html.js';
import { idText } from './id-text.js';
import { DEPENDS_FIELDS, dependsView } from './depends-view.js';
import { postButton } from './queue-view.js';
import { messageTagsView } from './tags-view.js';
import { timelineView } from './timeline-view.js';
import { waitingWords } from './waiting-view.js';
import { isoTime } from '../../message/iso-time.js';
import { formatSize } from '../../message/run-limits.js';

const SUMMARY = ['param1', 'param2', 'param3', 'param4', 'count'];
const FULL = ['msg_id', 'max_count', 'post_run_webhook', 'dest', 'src', 'orig_msg_id', 'cloned_from', 'dups', 'dup', 'force_remote', 'due', 'path'];
// Tags and dependencies have their own cards; `waiting` is told in words under the state.
const NOT_SHOWN = new Set(['status', 'state', '_attachments', 'tags', 'waiting', ...DEPENDS_FIELDS, ...SUMMARY]);

/** A full id URL or a short id of this queue, as a link. */
function msgLink(value: unknown, q: string, urls: Urls): SafeHtml {
  if (typeof value !== 'string') return html`${JSON.stringify(value)}`;
  if (/^https?:\/\//.test(value)) return html`<a href="${safeHref(value)}">${idText(value)}</a>`;
  if (/^\.?\d{8}\.\d{4}\.\d{2}\.\d{3}\.\d+$/.test(value)) return html`<a href="${urls.msg(q, value)}">${idText(value)}</a>`;
  return html`${value}`;
}

function fieldValue(key: string, value: unknown, q: string, urls: Urls): SafeHtml {
  if (key === 'orig_msg_id' || key === 'dup' || key === 'cloned_from') return msgLink(value, q, urls);
  if (key === 'dups' && Array.isArray(value)) return html`${value.map((v) => html`<div>${msgLink(v, q, urls)}</div>`)}`;
  if (key === 'post_run_webhook' && Array.isArray(value)) return html`${value.map((v) => html`<div><a href="${safeHref(v)}">${String(v)}</a></div>`)}`;
  if (key === 'due' && typeof value === 'number') return html`${value} <span class="muted">(${isoTime(value * 1000) ?? 'no date'})</span>`;
  // A memory limit is kept in bytes; beside them, as it was most likely written (512M).
  if ((key === 'memory_max' || key === 'memory_high') && typeof value === 'number' && formatSize(value) !== String(value))
    return html`${value} <span class="muted">(${formatSize(value)})</span>`;
  // The message's directory ends in its id: wrapped at its slashes and dots, never inside a number.
  if (key === 'path' && typeof value === 'string') return idText(value);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return html`${String(value)}`;
  return html`<code>${JSON.stringify(value, null, 1)}</code>`;
}

/**
 * One `name : value` row as the classic message page had it (td.key, td.sep, value), which
 * scraping clients read; the value cell keeps its id for rq's own tests and scripts. The name and
 * the value each have a space on both sides, as the classic template wrote them: clients match rows
 * with patterns such as `\scount[^:]+:[^2]+2\s`. A cell's outer spaces are not drawn.
 */
function fieldRow(key: string, value: SafeHtml, title?: string): SafeHtml {
  return html`<tr><td class="key"> ${key} </td><td class="sep"> : </td><td id="field-${key}"${title ? html` class="id-cell" title="${title}"` : ''}> ${value} </td></tr>`;
}

/** The message's state in its outcome colour: done green, err red, relayed blue, run amber (rq.css). */
function stateBadge(state: string): SafeHtml {
  return html`<span class="status-badge state-${state}" id="message-state" data-state="${state}">${state}</span>`;
}

function statusCell(m: MessageView): SafeHtml {
  const relayed = /^relayed - (https?:\/\/\S+)$/.exec(m.status);
  return relayed ? html`relayed - <a href="${safeHref(relayed[1])}" id="relayed-link">${relayed[1]}</a>` : html`${m.status}`;
}

type AttachmentRow = NonNullable<MessageView['_attachments']>[string];

/** Name (with its links) and md5 cells: what is not a regular file is named as what it is, never linked, never read. */
function attachmentCells(m: MessageView, q: string, urls: Urls, name: string, a: AttachmentRow): SafeHtml {
  if (a.type) return html`<td>${name}</td><td><span class="muted" data-kind="${a.type}">a ${a.type}: not served</span></td>`;
  const sum = a.md5
    ? html`<code>${a.md5}</code>`
    : html`<span class="muted" title="rq did not store this file and it is too large to read for a view">not computed</span>`;
  return html`<td><a href="${urls.msg(q, m.msg_id, `/attach/${encodeURIComponent(name)}`)}">${name}</a>
  <a class="muted small" href="${urls.msg(q, m.msg_id, `/tailview/${encodeURIComponent(name)}`)}">view</a></td><td>${sum}</td>`;
}

function attachmentsView(m: MessageView, q: string, urls: Urls, prep: boolean): SafeHtml {
  const list = Object.entries(m._attachments ?? {});
  if (list.length === 0) return html`<p class="muted" id="attachments-empty">No attachments.</p>`;
  const rows = list.map(
    ([name, a]) => html`<tr data-attachment="${name}">${attachmentCells(m, q, urls, name, a)}<td class="num">${a.size ?? ''}</td>
  ${prep ? html`<td>${postButton(urls.msg(q, m.msg_id, `/attach/${encodeURIComponent(name)}`), 'Delete', { fields: { _method: 'delete' }, cls: 'button small danger', confirm: `Delete attachment ${name}?` })}</td>` : ''}</tr>`,
  );
  return html`<div class="table-wrap"><table class="grid" id="attachments"><thead><tr><th>Name</th><th>MD5</th><th>Size</th>${prep ? html`<th>Delete</th>` : ''}</tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** rq-beyond §B7: lower runs first. */
function priorityForm(m: MessageView, action: string): SafeHtml {
  const current = typeof m.priority === 'number' ? m.priority : 0;
  return html`<form id="priority-form" class="inline" method="post" action="${action}"><label for="priority-input">priority</label>
  <input id="priority-input" name="priority" type="number" step="1" min="-1000000" max="1000000" value="${String(current)}">
  <button type="submit" class="button small" id="btn-priority">Set</button></form>`;
}

/** rq-beyond §B6: a new due, as seconds from now (0 runs it as soon as a worker is free, under its priority). */
function rescheduleForm(action: string): SafeHtml {
  return html`<form id="reschedule-form" class="inline" method="post" action="${action}"><label for="reschedule-delay">run in</label>
  <input id="reschedule-delay" name="delay" type="number" step="any" min="0" value="60"> s
  <button type="submit" class="button small" id="btn-reschedule">Reschedule</button></form>`;
}

const CANCEL_HELP: Record<string, string> = {
  que: 'Takes it out of the que and keeps it in err, with its history: it can be requeued.',
  run: 'Stops the script (TERM, then KILL after a grace) and keeps the message in err, with its history: it can be requeued.',
};
const DESTROY_HELP = 'Kills the script now and removes the message, its history, output and attachments for good.';

/** What Cancel and Destroy do, in words beside them: they look alike and only one keeps the message. */
function actionHelp(state: string): SafeHtml {
  const cancel = CANCEL_HELP[state];
  if (!cancel) return html``;
  return html`<p class="action-help muted small" id="action-help"><b>Cancel</b>: ${cancel}${state === 'run' ? html` <b>Destroy</b>: ${DESTROY_HELP}` : ''}</p>`;
}

/** `home`: the queue that holds the message (rq_router when routing, spec §9.2), whose events the page follows. */
export function messageView(m: MessageView, q: string, urls: Urls, history: readonly HistoryLine[] = [], home = q): SafeHtml {
  const prep = m.state === 'prep';
  const self = urls.msg(q, m.msg_id);
  const summary = SUMMARY.filter((k) => m[k] !== undefined).map((k) => fieldRow(k, fieldValue(k, m[k], q, urls)));
  const waiting = waitingWords(m.waiting, urls);
  const fullKeys = [
    ...FULL.filter((k) => m[k] !== undefined),
    ...Object.keys(m)
      .filter((k) => !FULL.includes(k) && !NOT_SHOWN.has(k))
      .sort(),
  ];
  // The msg_id row keeps the id as plain text between spaces (classic clients match it so): on a phone it is
  // shortened (rq.css .id-cell) with the whole id in its title, and the page's title line shows it whole.
  const full = fullKeys.map((k) => fieldRow(k, fieldValue(k, m[k], q, urls), k === 'msg_id' ? m.msg_id : undefined));
  const ask = (what: string) => `${what} message ${m.msg_id}?`;
  const actions = prep
    ? html`${postButton(self, 'Commit Message', { id: 'btn-commit', fields: { _method: 'commit' }, cls: 'button primary' })}
${postButton(self, 'Delete Message', { id: 'btn-delete', fields: { _method: 'delete' }, cls: 'button danger', confirm: `${ask('Delete')} Its attachments go with it.` })}
${postButton(urls.msg(q, m.msg_id, '/cancel'), 'Cancel', { id: 'btn-cancel', cls: 'button danger', confirm: ask('Cancel') })}`
    : html`${postButton(urls.msg(q, m.msg_id, '/clone'), 'Clone message', { id: 'btn-clone' })}
${m.state === 'run' ? '' : postButton(urls.msg(q, m.msg_id, '/run_now'), 'Run message (risky)', { id: 'btn-run-now' })}
${m.state === 'run' ? postButton(self, 'Destroy', { id: 'btn-destroy', fields: { _method: 'destroy' }, cls: 'button danger', confirm: `${ask('Destroy')} Its script is killed now.`, title: DESTROY_HELP }) : ''}
${m.state === 'que' || m.state === 'run' ? postButton(urls.msg(q, m.msg_id, '/cancel'), 'Cancel', { id: 'btn-cancel', cls: 'button danger', confirm: ask('Cancel'), title: CANCEL_HELP[m.state] }) : ''}
${m.state === 'err' ? postButton(urls.msg(q, m.msg_id, '/requeue'), 'Requeue', { id: 'btn-requeue', cls: 'button primary' }) : ''}
${m.state === 'que' || m.state === 'err' ? postButton(self, 'Delete', { id: 'btn-delete', fields: { _method: 'delete' }, cls: 'button danger', confirm: ask('Delete') }) : ''}`;
  const upload = prep
    ? html`<form id="upload-form" class="upload" method="post" enctype="multipart/form-data" action="${urls.msg(q, m.msg_id, '/attach/new')}">
  <input type="hidden" name="x_format" value="html">
  <input type="file" name="filedata" id="upload-file" required>
  <button type="submit" class="button" id="btn-upload">Upload attachment</button>
</form>`
    : '';
  const tail = prep
    ? ''
    : html`<section class="card" id="log-tail"><div class="card-head"><h3>Log Tail Window</h3>
  <span><a href="${urls.msg(q, m.msg_id, '/log/stdio.log')}" id="raw-log-link">Raw log</a> · <a href="${urls.msg(q, m.msg_id, '/tailviewlog/stdio.log')}" id="full-tail-link">Full tail</a></span></div>
  <iframe id="tail-frame" class="tail-frame" title="stdio.log" src="${urls.msg(q, m.msg_id, '/tailviewlog/stdio.log')}?embed=1"></iframe></section>`;
  // message.js follows this message on GET /events: its status line live, the rest refreshed when it moves.
  const events = urls.link(`events?queue=${encodeURIComponent(home)}&msg_id=${encodeURIComponent(m.msg_id)}`);
  return html`<div class="page-head" id="message-head" data-events="${events}"><h1 id="message-title">RQ : <a href="${urls.queue(q)}">${q}</a> : <span id="message-id" class="msg-id">${idText(m.msg_id)}</span></h1>
  ${stateBadge(m.state)}</div>
<div class="actions" id="message-actions">${actions}${
    m.state === 'que' || prep ? html`${priorityForm(m, urls.msg(q, m.msg_id, '/priority'))}${rescheduleForm(urls.msg(q, m.msg_id, '/reschedule'))}` : ''
  }${actionHelp(m.state)}</div>
${tail}
<section class="card">
  <div class="card-head"><h3>${prep ? 'Prep Message' : 'Message'}</h3><a href="${urls.msg(q, m.msg_id, '.json')}" id="raw-json-link">raw</a></div>
  <table class="fields message-info" id="message-summary"><tbody>
    ${fieldRow('status', statusCell(m))}
    ${fieldRow('state', html`<span class="state-text state-${m.state}">${m.state}</span>`)}
    ${waiting ? fieldRow('waiting', waiting) : ''}
    ${summary}
  </tbody></table>
  <details id="message-full"><summary>full</summary><table class="fields message-info"><tbody>${full}</tbody></table></details>
</section>
${timelineView(history)}
${dependsView(m, q, urls)}
${messageTagsView(Array.isArray(m.tags) ? m.tags.filter((t): t is string => typeof t === 'string') : [], q, m.msg_id, urls)}
<section class="card" id="attachments-section"><h3>Attachments</h3>${attachmentsView(m, q, urls, prep)}${upload}</section>`;
}
