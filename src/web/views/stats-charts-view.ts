// The stats page's charts with their numbers as tables: throughput per minute and per hour, wait and run latency histograms with p50/p95/p99.
import type { Distribution } from '../../ipc/stats-reply.js';
import { type ChartData, QUANTILES, type Quantiles, type StatsJson, histogramBins, histogramChart, hourlyChart, perMinuteChart } from '../stats-series.js';
import { type SafeHtml, html } from './html.js';

/** `0.25 s`, `12.5 s`, `3m 20s`: a latency an operator reads at a glance; `-` for none. */
export function seconds(x: number | null | undefined): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '-';
  if (x < 10) return `${Number(x.toFixed(3))} s`;
  if (x < 60) return `${Number(x.toFixed(1))} s`;
  const s = Math.round(x);
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

const hhmm = (epochS: number) => new Date(epochS * 1000).toISOString().slice(11, 16);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/**
 * A chart drawn by js/stats-charts.js from `data-chart`, with the same numbers in a table: the chart
 * is never the only place they are (screen readers, no script, copying a figure).
 */
function chartFigure(id: string, title: string, data: ChartData, table: SafeHtml, note?: SafeHtml): SafeHtml {
  return html`<figure class="chart" id="${id}-figure"><figcaption>${title}</figcaption>
<div class="chart-box" id="${id}" data-chart="${JSON.stringify(data)}" role="img" aria-label="${`${title}: the numbers are in the table under it`}"></div>
${note ?? ''}<details class="chart-data" id="${id}-data"><summary>numbers</summary><div class="table-wrap">${table}</div></details></figure>`;
}

function throughputTable(id: string, data: ChartData, when: (x: number) => string): SafeHtml {
  const [done, err] = data.series;
  const rows = data.x.map(
    (x, i) =>
      html`<tr><td><time datetime="${new Date(x * 1000).toISOString()}">${when(x)}</time></td><td class="num">${done.values[i]}</td><td class="num">${err.values[i]}</td></tr>`,
  );
  return html`<table class="grid" id="${id}"><thead><tr><th>UTC</th><th>DONE</th><th>ERR</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function totals(id: string, data: ChartData, span: string): SafeHtml {
  const [done, err] = data.series;
  return html`<p class="chart-totals" id="${id}-totals">${span}: <span class="good" id="${id}-done">${sum(done.values)}</span> done, <span class="bad" id="${id}-err">${sum(err.values)}</span> err</p>`;
}

/** Throughput: the last hour per minute (today only: it is live) and the day per UTC hour. */
export function throughputView(day: StatsJson, nowMs: number): SafeHtml {
  const hourly = hourlyChart(day, nowMs);
  const hourlyFig = chartFigure(
    'chart-hourly',
    `Done and err per hour (UTC), ${day.date}`,
    hourly,
    throughputTable('hourly-table', hourly, hhmm),
    totals('hourly', hourly, 'this day'),
  );
  if (!day.live) return html`<section class="card" id="stats-throughput"><h3>Throughput</h3><div class="charts">${hourlyFig}</div></section>`;
  const minute = perMinuteChart(day.live, nowMs);
  const minuteFig = chartFigure(
    'chart-minute',
    'Done and err per minute, last hour',
    minute,
    throughputTable('minute-table', minute, hhmm),
    totals('minute', minute, 'last hour'),
  );
  return html`<section class="card" id="stats-throughput"><h3>Throughput</h3><div class="charts">${minuteFig}${hourlyFig}</div></section>`;
}

const SUMMARY: [string, (d: Distribution & Quantiles) => string][] = [
  ['count', (d) => String(d.count)],
  ['mean', (d) => (d.count ? seconds(d.mean) : '-')],
  ['stddev', (d) => (d.count > 1 ? seconds(Math.sqrt(d.variance)) : '-')],
  ['min', (d) => seconds(d.min)],
  ['max', (d) => seconds(d.max)],
  // A quantile is known only to its histogram bin: shown as the bound it is, never as if measured.
  ...QUANTILES.map(([q]): [string, (d: Distribution & Quantiles) => string] => [q, (d) => (d[q] === null ? '-' : `≤ ${seconds(d[q])}`)]),
];

/** Why p50/p95/p99 read `≤`: what the histogram keeps (§B15.2). */
const QUANTILE_NOTE = html`<p class="muted small quantile-note" id="quantile-note">p50, p95 and p99 are upper bounds, not measurements: rq keeps each day's latencies in bins (1 s wide up to a minute, then 1 min, 1 h, 1 day), so a quantile is known as the top of the bin it falls in, or the maximum when that is lower. Count, mean, stddev, min and max are exact.</p>`;

function latencyFigure(name: 'wait' | 'run', title: string, d: Distribution & Quantiles): SafeHtml {
  const summary = html`<table class="grid latency-summary" id="${name}-summary"><tbody>${SUMMARY.map(
    ([k, show]) => html`<tr><th scope="row">${k}</th><td class="num" id="${name}-${k}">${show(d)}</td></tr>`,
  )}</tbody></table>`;
  const bins = histogramBins(d);
  let chart: SafeHtml;
  if (bins.length === 0) {
    const why = d.count ? 'histogram no longer kept for this day (histogram_history_days)' : 'no observations';
    chart = html`<p class="muted chart-empty" id="chart-${name}-empty">${why}</p>`;
  } else {
    const rows = bins
      .filter((b) => b.count > 0)
      .map((b) => html`<tr><td>${b.label}</td><td>${seconds(b.from)} – ${seconds(b.to)}</td><td class="num">${b.count}</td></tr>`);
    const table = html`<table class="grid" id="${name}-bins"><thead><tr><th>BIN</th><th>RANGE</th><th>COUNT</th></tr></thead><tbody>${rows}</tbody></table>`;
    chart = chartFigure(`chart-${name}`, `${title}: count per bin, p50/p95/p99 marked`, histogramChart(name, d), table);
  }
  return html`<div class="latency" id="stats-${name}"><h4>${title}</h4>${summary}${chart}</div>`;
}

/** Wait (que → start) and run (start → exit) of this day as qless histograms, with their summary numbers. */
export function latencyView(day: StatsJson): SafeHtml {
  return html`<section class="card" id="stats-latency"><h3>Latency</h3><div class="charts">
${latencyFigure('wait', 'Wait (ready to started)', day.wait)}${latencyFigure('run', 'Run (started to exit)', day.run)}</div>${QUANTILE_NOTE}</section>`;
}
