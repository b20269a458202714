// The message page's Timeline (rq-beyond §B14): every move and event of its history, with the time since the step before.
import { type HistoryLine, historyDetails } from '../../ipc/history-line.js';
import { type SafeHtml, html } from './html.js';

/** `0.4s`, `12s`, `3m 05s`, `2h 01m`: the wait or run time a step took. */
export function stepDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 10_000) return `${(ms / 1000).toFixed(ms < 1000 ? 3 : 1)}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export function timelineView(lines: readonly HistoryLine[]): SafeHtml {
  if (lines.length === 0) return html`<section class="card" id="timeline"><h3>Timeline</h3><p class="muted">No history.</p></section>`;
  const rows = lines.map((l, i) => {
    const step = l.event ?? `${l.from ?? '·'} → ${l.to ?? '?'}`;
    const since = i === 0 ? '' : stepDuration(Date.parse(l.at) - Date.parse(lines[i - 1].at));
    const more = historyDetails(l).join(', ');
    return html`<tr><td>${l.at}</td><td>${step}</td><td>${l.actor ?? ''}</td><td>${l.reason ?? ''}${more ? html` <span class="muted small">${more}</span>` : ''}</td><td class="num">${since}</td></tr>`;
  });
  return html`<section class="card" id="timeline"><h3>Timeline</h3><div class="table-wrap"><table class="grid"><thead><tr><th>Time</th><th>Step</th><th>Actor</th><th>Reason</th><th>After</th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
}
