// The message page's Timeline (rq-beyond §B14): every move and event of its history as a list, each step in the colour of where it led, with the time since the step before.
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

/** Events that tell of a failure read in the err colour; other events are neutral. */
const BAD_EVENTS = new Set(['timeout', 'stall']);

/** `to-done`, `to-err`…: the state a move led to (rq.css colours it); `event` or `event bad` for the rest. */
function stepClass(l: HistoryLine): string {
  if (l.event !== undefined) return BAD_EVENTS.has(l.event) ? 'event bad' : 'event';
  return `to-${l.to ?? 'unknown'}`;
}

export function timelineView(lines: readonly HistoryLine[]): SafeHtml {
  if (lines.length === 0) return html`<section class="card" id="timeline"><h3>Timeline</h3><p class="muted">No history.</p></section>`;
  const steps = lines.map((l, i) => {
    const step = l.event ?? `${l.from ?? '·'} → ${l.to ?? '?'}`;
    const since = i === 0 ? '' : stepDuration(Date.parse(l.at) - Date.parse(lines[i - 1].at));
    const more = historyDetails(l).join(', ');
    return html`<li class="step ${stepClass(l)}"><time class="t-at" datetime="${l.at}">${l.at}</time><span class="t-step">${step}</span><span class="t-actor">${l.actor ?? ''}</span><span class="t-reason">${l.reason ?? ''}${more ? html` <span class="muted small">${more}</span>` : ''}</span><span class="t-after num">${since ? html`+${since}` : ''}</span></li>`;
  });
  return html`<section class="card" id="timeline"><h3>Timeline</h3><ol class="timeline" id="timeline-steps">${steps}</ol></section>`;
}
