// The message page's Timeline (rq-beyond §B14): every move and event of its history as a list, each step in the colour of where it led, in words, with the time since the step before.
import type { HistoryLine } from '../../ipc/history-line.js';
import { type SafeHtml, html } from './html.js';
import { detailWords, reasonWords, stepDuration, stepWords } from '../../ipc/history-words.js';

export { stepDuration } from '../../ipc/history-words.js';

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
    const since = i === 0 ? '' : stepDuration(Date.parse(l.at) - Date.parse(lines[i - 1].at));
    const more = detailWords(l).join(', ');
    return html`<li class="step ${stepClass(l)}"><time class="t-at" datetime="${l.at}">${l.at}</time><span class="t-step">${stepWords(l)}</span><span class="t-actor">${l.actor ?? ''}</span><span class="t-reason">${reasonWords(l)}${more ? html` <span class="muted small">${more}</span>` : ''}</span><span class="t-after num">${since ? html`+${since}` : ''}</span></li>`;
  });
  return html`<section class="card" id="timeline"><h3>Timeline</h3><ol class="timeline" id="timeline-steps">${steps}</ol></section>`;
}
