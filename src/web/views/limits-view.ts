// The dashboard's `#limits` (rq-beyond §B12): each concurrency key with its slots in use, waiters and orphans; redrawn from /limits.json by limits.js.
import type { LimitKeyStatus } from '../../ipc/mgr-client.js';
import type { Urls } from '../urls.js';
import { type SafeHtml, html } from './html.js';

export type LimitsState = { ok: true; keys: Record<string, LimitKeyStatus> } | { ok: false; error: string };

/** One key's row: what limits.js renderLimits builds from /limits.json, cell for cell. */
export interface LimitRow {
  key: string;
  inUse: number;
  concurrency: number;
  waiting: number;
  orphaned: number;
  source: string;
}

const count = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

/** Rows by key, in code-point order. */
export function limitRows(keys: Record<string, LimitKeyStatus>): LimitRow[] {
  return Object.entries(keys)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, s]) => ({
      key,
      inUse: count(s.holders),
      concurrency: Number(s.concurrency),
      waiting: count(s.waiting),
      orphaned: Array.isArray(s.holders) ? s.holders.filter((h) => h?.orphaned === true).length : 0,
      source: String(s.source),
    }));
}

function row(r: LimitRow): SafeHtml {
  const full = r.inUse >= r.concurrency;
  return html`<tr data-key="${r.key}"><td class="key"><code>${r.key}</code></td><td class="in-use num${full ? ' busy' : ''}">${r.inUse}/${r.concurrency}</td>
<td class="waiting num">${r.waiting}</td><td class="orphaned num${r.orphaned ? ' bad' : ''}">${r.orphaned}</td><td class="source">${r.source}</td></tr>`;
}

/** The keys rq-mgr knows (a key is known while it has holders or waiters), or why rq-mgr could not say. */
export function limitsView(s: LimitsState, urls: Urls): SafeHtml {
  let body: SafeHtml;
  if (!s.ok) body = html`<p class="bad" id="limits-error">${s.error}</p>`;
  else {
    const rows = limitRows(s.keys);
    body = rows.length
      ? html`<div class="table-wrap"><table class="grid" id="limits-table"><thead><tr><th>KEY</th><th>IN USE</th><th>WAITING</th><th>ORPHANED</th><th>SOURCE</th></tr></thead>
<tbody>${rows.map(row)}</tbody></table></div>`
      : html`<p class="muted" id="limits-empty">No concurrency keys in use.</p>`;
  }
  return html`<section class="card" id="limits" data-refresh="${urls.link('limits.json')}" data-events="${urls.link('events')}">
  <div class="card-head"><h2>Limits</h2><a href="${urls.link('limits.json')}" id="limits-json">json</a></div>
  <div id="limits-list">${body}</div></section>`;
}
