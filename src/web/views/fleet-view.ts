// The fleet page's body: every host of the fleet (up, or gone and since when), its URL, and each of its queues with status, ready, running and workers.
import type { FleetHost, FleetView, QueueFigures } from '../../ipc/fleet-reply.js';
import { type SafeHtml, html } from './html.js';
import { idPart, relativeTime } from './format.js';

/** A host's URL as a link only when it is http(s): the record came from etcd, written by any host. */
function urlCell(url: string): SafeHtml {
  return /^https?:\/\//i.test(url) ? html`<a class="host-url" href="${url}" rel="noopener noreferrer">${url}</a>` : html`<span class="host-url">${url}</span>`;
}

/** `2026-12-02T16:00:00.000Z (5 mins ago)`; a gone host no host saw go has no since. */
function sinceCell(since: string | null, now: Date): SafeHtml {
  if (since === null) return html`<span class="muted">unknown</span>`;
  const t = Date.parse(since);
  // Never "due now" nor ahead: a since within the second, or a clock of another host a little ahead, reads "1 sec ago".
  const ago = Number.isFinite(t) ? html` <span class="muted">(${relativeTime(-Math.max(1, Math.round((now.getTime() - t) / 1000)))})</span>` : '';
  return html`<time datetime="${since}">${since}</time>${ago}`;
}

const queueCells = (name: string, q: QueueFigures): SafeHtml =>
  html`<td class="name" data-col="queue">${name}</td><td class="status ${q.status === 'UP' ? 'up' : 'down'}" data-col="status">${q.status}</td><td class="num" data-col="ready">${q.ready}</td><td class="num" data-col="running">${q.running}</td><td class="num" data-col="workers">${q.workers}</td>`;

/** One tbody per host: its first row carries the host's cells across all of its queue rows. */
function hostRows(h: FleetHost, now: Date): SafeHtml {
  const queues = Object.entries(h.queues);
  const span = Math.max(1, queues.length);
  const hostCells = html`<td class="name" rowspan="${span}" data-col="host">${h.host}</td>
  <td class="status ${h.state === 'up' ? 'up' : 'down'}" rowspan="${span}" data-col="state">${h.state}</td>
  <td rowspan="${span}" data-col="since">${sinceCell(h.since, now)}</td>
  <td rowspan="${span}" data-col="url">${urlCell(h.url)}</td>`;
  const rows = queues.length
    ? queues.map(([name, q], i) => html`<tr data-queue="${name}">${i === 0 ? hostCells : ''}${queueCells(name, q)}</tr>`)
    : html`<tr>${hostCells}<td class="muted" colspan="5" data-col="queue">no queues</td></tr>`;
  return html`<tbody id="host-${idPart(h.host)}" data-host="${h.host}" data-state="${h.state}">${rows}</tbody>`;
}

export function fleetView(v: FleetView, now: Date): SafeHtml {
  const member = v.member.reason ? `${v.member.state}: ${v.member.reason}` : v.member.state;
  const stale = v.etcd.reachable ? '' : html`<p class="bad" id="fleet-stale">etcd (${v.etcd.endpoints.join(', ')}) does not answer: hosts as last seen</p>`;
  return html`<section class="card" id="fleet">
  <h2>Fleet <span id="fleet-name">${v.fleet}</span></h2>
  <p id="fleet-member">This host is <strong>${v.host}</strong> (${member} since ${sinceCell(v.member.since, now)})</p>
  ${stale}
  <div class="table-wrap"><table class="grid" id="fleet-table">
    <thead><tr><th>HOST</th><th>STATE</th><th>SINCE</th><th>URL</th><th>QUEUE</th><th>STATUS</th><th>READY</th><th>RUNNING</th><th>WORKERS</th></tr></thead>
    ${v.hosts.map((h) => hostRows(h, now))}
  </table></div>
</section>`;
}
