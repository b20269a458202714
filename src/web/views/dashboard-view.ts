// The dashboard: queue table with counts and status, timer list, and the supervisor's state line.
import type { DashboardData, DashboardQueue } from '../dashboard-data.js';
import type { Urls } from '../urls.js';
import { type SafeHtml, html } from './html.js';
import { countClass, duration, idPart, relativeTime } from './format.js';

export const COUNT_COLUMNS = ['prep', 'que', 'run', 'err', 'done', 'relayed'] as const;

function queueRow(q: DashboardQueue, urls: Urls, odd: boolean): SafeHtml {
  const id = idPart(q.name);
  const shown = q.alive && q.status !== 'DOWN' && q.counts;
  const cells = COUNT_COLUMNS.map((c) => {
    const n = shown ? q.counts![c] : undefined;
    return html`<td id="q-${id}-${c}" data-col="${c}" class="${shown ? countClass(c, n) : 'count zero'}">${shown ? n : '-'}</td>`;
  });
  const status = q.alive ? (q.status ?? '?') : `DOWN ${q.error ?? ''}`.trim();
  return html`<tr id="q-${id}" data-queue="${q.name}" class="${odd ? 'odd' : 'even'}${q.builtin ? ' builtin' : ''}">
  <td class="name"><a href="${urls.queue(q.name)}">${q.name}</a></td>
  ${cells}
  <td id="q-${id}-pid" class="num">${q.pid ?? '-'}</td>
  <td id="q-${id}-uptime" class="num">${q.alive ? duration(q.uptime) : '-'}</td>
  <td id="q-${id}-status" class="status ${q.alive && q.status === 'UP' ? 'up' : 'down'}"${q.reason ? html` title="${q.reason}"` : ''}>${status}${q.reason ? html`<div class="muted" id="q-${id}-reason">${q.reason}</div>` : ''}</td>
</tr>`;
}

/**
 * `tracked`: the `#tracked` and `#limits` sections (views/tags-view.ts, views/limits-view.ts), shown under the queue list;
 * `attention`: the "Needs attention" panel (views/attention-view.ts), shown above it.
 */
export function dashboardView(d: DashboardData, urls: Urls, allowNewQueue: boolean, tracked: SafeHtml, attention: SafeHtml = html``): SafeHtml {
  const rows = d.queues.map((q, i) => queueRow(q, urls, i % 2 === 1));
  const timers = d.timers.ok
    ? d.timers.timers.length
      ? html`<table class="grid" id="timer-table"><thead><tr><th>NAME</th><th>DUE</th></tr></thead><tbody>${d.timers.timers.map(
          (t) => html`<tr data-timer="${t.name}"><td>${t.name}</td><td class="num">${relativeTime(t.in)}</td></tr>`,
        )}</tbody></table>`
      : html`<p class="muted" id="timer-empty">No timers.</p>`
    : html`<p class="bad" id="timer-error">Error: ${d.timers.error}</p>`;
  const mgr = d.mgr.up
    ? html`<p id="mgr-state" class="good"><strong>QUEUE MGR is OPERATIONAL</strong></p>
<ul class="meta" id="mgr-meta"><li>pong</li><li>pid ${d.mgr.pid ?? '?'}</li><li>uptime ${d.mgr.uptime ?? '?'} seconds</li>
<li class="${d.mgr.versionMismatch ? 'bad' : ''}">server: v${d.mgr.version ?? '?'}${d.mgr.versionMismatch ? html` (this web process is v${d.webVersion})` : ''}</li></ul>`
    : html`<p id="mgr-state" class="bad"><strong>QUEUE MGR is DOWN</strong></p><p class="muted">${d.mgr.error ?? ''}</p>`;
  return html`${attention}<section class="card">
  <div class="card-head"><h2>Queue List</h2>${allowNewQueue ? html`<a class="button" id="new-queue-link" href="${urls.link('new_queue')}">New Queue</a>` : ''}</div>
  <div class="table-wrap"><table class="grid" id="queue-table" data-refresh="${urls.link('dashboard.json')}" data-events="${urls.link('events')}">
    <thead><tr><th>NAME</th><th>PREP</th><th>QUEUE</th><th>RUN</th><th>ERR</th><th>DONE</th><th>RELAYED</th><th>PID</th><th>UPTIME</th><th>STATUS</th></tr></thead>
    <tbody>${rows}</tbody>
  </table></div>
</section>
${tracked}
<section class="card"><h2>Timer List</h2><div id="timer-list">${timers}</div></section>
<section class="card" id="mgr-section">${mgr}</section>`;
}
