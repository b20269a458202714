// The queue page: status and admin buttons, config, cron schedules, tags, the waiting breakdown and the paged message list.
import type { QueueSnapshot } from '../queue-snapshot.js';
import type { Urls } from '../urls.js';
import { type SafeHtml, html } from './html.js';
import { duration } from './format.js';
import { type MessageTableData, messageTableView } from './message-table-view.js';
import { postButton } from './post-button.js';
import { queueTagsView } from './tag-chip.js';
import { type WaitingCounts, waitingBreakdownView } from './waiting-view.js';

export interface Schedule {
  cron: string;
  fields: Record<string, string>;
  /** Next occurrence (epoch ms), null when there is none or the expression is invalid. */
  next: number | null;
  error?: string;
  /** Last occurrence that got its message (epoch s), and that message. */
  last: number | null;
  lastMsg: string | null;
}

export interface QueuePageData {
  name: string;
  snap: QueueSnapshot;
  configText: string | null;
  schedules: Schedule[];
  /** The message list: counts, filter, one page. */
  table: MessageTableData;
  /** The bulk-action form the list's checkboxes belong to. */
  bulk?: SafeHtml;
  /** How many messages carry each tag (rq-beyond §B9): chips linking to the queue's tag views. */
  tags?: Record<string, number>;
  /** Queued messages that are not ready, per reason (rq-beyond §B2). */
  waiting?: WaitingCounts;
  now: number;
}

export { postButton };

function adminButtons(d: QueuePageData, urls: Urls): SafeHtml {
  const back = urls.queue(d.name);
  const admin = urls.queue(d.name, '/adminoper');
  const down = d.snap.status === 'DOWN';
  const paused = d.snap.status === 'PAUSE';
  return html`<div class="admin-buttons" id="admin-buttons">
  ${
    paused
      ? postButton(admin, 'Resume', { id: 'btn-resume', fields: { resume: '1', back }, disabled: down })
      : postButton(admin, 'Pause', { id: 'btn-pause', fields: { pause: '1', back }, disabled: down })
  }
  ${down ? postButton(admin, 'Up', { id: 'btn-up', fields: { up: '1', back } }) : postButton(admin, 'Down', { id: 'btn-down', fields: { down: '1', back }, cls: 'button danger', confirm: `Take queue ${d.name} down? It refuses new messages and starts none until it is up again.` })}
  ${postButton(urls.queue(d.name, '/restart'), 'Restart', { id: 'btn-restart', fields: { back }, confirm: `Restart queue ${d.name}? Its running scripts are stopped and run again later.` })}
  ${postButton(urls.queue(d.name, '/ack_errs'), 'Ack Errors', { id: 'btn-ack-errs', fields: { back } })}
  ${postButton(urls.queue(d.name, '/requeue_errs'), 'Requeue Errors', { id: 'btn-requeue-errs', fields: { back }, confirm: 'Run every error of this queue again, cancelled and expired ones too?' })}
  <form class="inline search" method="get" action="${urls.link('search')}" id="search-all-form">
    <input type="hidden" name="name" value="${d.name}"><input type="hidden" name="x_format" value="html">
    <input type="search" name="text" id="search-all-text" placeholder="search every state">
    <button type="submit" class="button" id="btn-search-all">Search all</button>
  </form>
</div>`;
}

function schedulesView(d: QueuePageData, urls: Urls): SafeHtml {
  if (d.schedules.length === 0) return html``;
  const when = (ms: number) =>
    html`<time datetime="${new Date(ms).toISOString()}">${new Date(ms)
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC')}</time>`;
  const rows = d.schedules.map((s, i) => {
    const fields: Record<string, string> = { x_format: 'html', back: urls.queue(d.name), 'mesg[dest]': d.name, 'mesg[src]': 'cron' };
    for (const [k, v] of Object.entries(s.fields)) fields[`mesg[${k}]`] = v;
    const next = s.error
      ? html`<span class="bad">${s.error}</span>`
      : s.next === null
        ? html`<span class="muted">never</span>`
        : html`${when(s.next)} <span class="muted">(in ${Math.max(0, Math.round((s.next - d.now) / 1000))} s)</span>`;
    const last =
      s.last === null
        ? html`<span class="muted">-</span>`
        : html`${when(s.last * 1000)}${s.lastMsg ? html` <a href="${urls.msg(d.name, s.lastMsg)}">${s.lastMsg}</a>` : ''}`;
    return html`<tr data-schedule="${i}"><td><code>${s.cron}</code></td><td>${Object.entries(s.fields).map(([k, v]) => html`<span class="kv">${k}=${v}</span> `)}</td>
<td id="schedule-next-${i}">${next}</td><td id="schedule-last-${i}">${last}</td>
<td>${postButton(urls.queue(d.name, '/new_message'), 'Run now', { id: `btn-schedule-run-${i}`, fields })}</td></tr>`;
  });
  return html`<section class="card" id="schedules"><h3>Schedules</h3><div class="table-wrap"><table class="grid"><thead><tr><th>CRON</th><th>PARAMS</th><th>NEXT RUN</th><th>LAST RUN</th><th></th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
}

export function queueView(d: QueuePageData, urls: Urls): SafeHtml {
  const s = d.snap;
  const badge = s.alive
    ? html`<span class="status-badge ${s.status === 'UP' ? 'up' : 'down'}" id="queue-status"${s.reason ? html` title="${s.reason}"` : ''}>${s.status}</span>${s.reason ? html` <span class="bad" id="queue-status-reason">${s.reason}</span>` : ''}`
    : html`<span class="status-badge down" id="queue-status">DOWN</span>`;
  // queue.js follows the queue from GET /events.
  const head = html`<div class="page-head" id="queue-head" data-events="${urls.link(`events?queue=${encodeURIComponent(d.name)}`)}"><h1 id="queue-name">${d.name}</h1>${badge}
  <span class="meta">pid <span id="queue-pid">${s.pid ?? '-'}</span> · uptime <span id="queue-uptime">${s.alive ? duration(s.uptime) : '-'}</span> · <a id="stats-link" href="${urls.queue(d.name, '/stats')}">statistics</a></span>
  <a class="button primary" id="new-message-link" href="${urls.queue(d.name, '/new_message')}">New Message</a></div>`;
  const config = html`<details class="card" id="config"><summary>config.json <a href="${urls.queue(d.name, '/config.json')}" id="config-raw">raw</a></summary><pre id="config-text">${d.configText ?? '(not shown: not a JSON object of at most 1 MiB)'}</pre></details>`;
  const list = messageTableView(d.table, urls, d.bulk);
  // Not running, or DOWN: the counts (and, while the process answers, the list) still show.
  if (!s.alive)
    return html`${head}<section class="card"><p class="bad" id="queue-dead"><strong>queue is COMPLETELY DOWN</strong></p><p class="muted">${s.error ?? ''}</p></section>${config}${list}`;
  if (s.status === 'DOWN')
    return html`${head}${adminButtons(d, urls)}<section class="card"><p class="bad" id="queue-hard-down"><strong>Queue is HARD DOWN</strong></p><p>Nothing runs; the messages below stay where they are.</p></section>${config}${list}`;
  return html`${head}${adminButtons(d, urls)}${config}${schedulesView(d, urls)}${queueTagsView(d.tags ?? {}, d.name, urls)}${waitingBreakdownView(d.waiting, d.name, urls)}${list}`;
}
