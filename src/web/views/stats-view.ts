// The stats page of a queue (rq-beyond §B15, §B1.11 `#stats`): a day's counters and outcomes, the live state, throughput and latency charts, failure groups; other stored days one link away.
import { type DayCounters, OUTCOMES } from '../../ipc/stats-reply.js';
import type { StatsJson } from '../stats-series.js';
import { dayAfter, dayBefore } from '../stats-days.js';
import type { Urls } from '../urls.js';
import { dayLabel } from './format.js';
import { type SafeHtml, html } from './html.js';
import { groupsCard } from './failed-view.js';
import { latencyView, seconds, throughputView } from './stats-charts-view.js';

export interface StatsPageData {
  queue: string;
  /** The day shown and today, `YYYYMMDD` (UTC). */
  date: string;
  today: string;
  /** Null when the queue did not answer; `error` says why. */
  day: StatsJson | null;
  error?: string;
  groups: Record<string, number> | null;
  /** Days with a stored record, newest first. */
  days: string[];
  now: number;
}

/** Every counter of §B15.1 but the outcomes, in the order an operator reads a day. */
export const COUNTERS = [
  'created',
  'started',
  'done',
  'err',
  'relayed',
  'failures',
  'retries',
  'resends',
  'timeouts',
  'stalls',
  'interrupts',
] as const satisfies readonly (keyof DayCounters)[];
const LIVE_STATES = ['prep', 'que', 'run', 'done', 'relayed', 'err', 'err_acked'] as const;
const QUE_PARTS = ['ready', 'delayed', 'dependencies', 'limit', 'coalesced'] as const;

/** One number with its name; the id lets tests and scripts read it (`stat-done`, `outcome-expired`…). */
/** A name that may break only after its underscores (`dependency_<wbr>failed`), never inside a word. */
function breakable(name: string): SafeHtml {
  const parts = name.split('_');
  return html`${parts.map((p, i) => (i < parts.length - 1 ? html`${p}_<wbr>` : html`${p}`))}`;
}

function tiles(id: string, prefix: string, entries: [string, number | string][]): SafeHtml {
  return html`<dl class="stat-tiles" id="${id}">${entries.map(([k, v]) => html`<div class="tile"><dt>${breakable(k)}</dt><dd id="${prefix}-${k}">${v}</dd></div>`)}</dl>`;
}

function nav(d: StatsPageData, urls: Urls): SafeHtml {
  const page = (date?: string) => urls.queue(d.queue, date === undefined ? '/stats' : `/stats?date=${date}`);
  const prev = dayBefore(d.date);
  const next = d.date < d.today ? html` <a class="button small" id="stats-next" href="${page(dayAfter(d.date))}">${dayLabel(dayAfter(d.date))} →</a>` : '';
  const today = d.date === d.today ? '' : html` <a class="button small" id="stats-today" href="${page()}">today</a>`;
  const stored = d.days
    .slice(0, 14)
    .map((day) => html` <a class="stored-day${day === d.date ? ' current' : ''}" href="${page(day)}" data-day="${day}">${dayLabel(day)}</a>`);
  return html`<nav class="card stats-nav" id="stats-nav"><a class="button small" id="stats-prev" href="${page(prev)}">← ${dayLabel(prev)}</a>${next}${today}
<form class="inline" id="stats-date-form" method="get" action="${page()}"><label for="stats-date">day</label> <input type="text" id="stats-date" name="date" value="${dayLabel(d.date)}" pattern="\\d{4}-\\d{2}-\\d{2}" placeholder="YYYY-MM-DD" title="a UTC day as YYYY-MM-DD, at most ${dayLabel(d.today)}" inputmode="numeric" size="10" maxlength="10" autocomplete="off"> <button type="submit" class="button small" id="btn-stats-date">Show</button></form>
${d.days.length ? html`<span class="stored-days" id="stats-days">stored:${stored}</span>` : ''}</nav>`;
}

function countersCard(day: StatsJson, isToday: boolean): SafeHtml {
  return html`<section class="card" id="stats-counters-card"><h3>${isToday ? 'Today' : dayLabel(day.date)} <span class="muted small">(UTC)</span></h3>
${tiles(
  'stats-counters',
  'stat',
  COUNTERS.map((k) => [k, day[k]]),
)}
<h4>Outcomes of err messages</h4>${tiles(
    'stats-outcomes',
    'outcome',
    OUTCOMES.map((o) => [o, day.outcomes[o] ?? 0]),
  )}</section>`;
}

function liveCard(day: StatsJson): SafeHtml {
  if (!day.live) return html``;
  const l = day.live;
  return html`<section class="card" id="stats-live"><h3>Now</h3>
${tiles(
  'live-counts',
  'live',
  LIVE_STATES.map((s) => [s, l.counts[s]]),
)}
<h4>Queued messages</h4>${tiles(
    'live-que',
    'que',
    QUE_PARTS.map((p) => [p, l.que[p]]),
  )}
${
  l.que.ready
    ? html`<p id="oldest-ready-line">Oldest ready message waiting for <strong id="oldest-ready" data-seconds="${l.oldest_ready_s}">${seconds(l.oldest_ready_s)}</strong></p>`
    : html`<p id="oldest-ready-line"><strong id="oldest-ready" data-seconds="${l.oldest_ready_s}">No ready message</strong> waiting.</p>`
}</section>`;
}

export function statsView(d: StatsPageData, urls: Urls): SafeHtml {
  const json = urls.queue(d.queue, d.date === d.today ? '/stats.json' : `/stats.json?date=${d.date}`);
  const head = html`<div class="page-head"><h1 id="stats-title">Statistics of <a href="${urls.queue(d.queue)}">${d.queue}</a>, <span id="stats-day">${dayLabel(d.date)}</span></h1><a href="${json}" id="stats-json">json</a></div>`;
  const body = d.day
    ? html`${countersCard(d.day, d.date === d.today)}${liveCard(d.day)}${throughputView(d.day, d.now)}${latencyView(d.day)}`
    : html`<section class="card"><p class="bad" id="stats-unavailable"><strong>No statistics:</strong> ${d.error ?? 'the queue did not answer'}</p></section>`;
  return html`${head}${nav(d, urls)}<div id="stats">${body}${groupsCard(d.queue, d.groups, urls, urls.queue(d.queue, '/stats'))}</div>`;
}
