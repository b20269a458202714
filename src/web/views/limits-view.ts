// The dashboard's `#limits` (rq-beyond §B12): each concurrency key with its slots in use, waiters, orphans and, for a fleet's key, the slots other hosts hold; redrawn from /limits.json by limits.js.
import type { LimitKeyStatus } from '../../ipc/mgr-client.js';
import { fleetScope } from '../../ipc/limit-scope.js';
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
  /** For a key the fleet shares: `fleet`, the slots other hosts hold and why this host cannot take any (fleetScope, as `rq limits` says); '' for this host's own keys. */
  fleet: string;
  /** Every slot taken, here or on other hosts. */
  full: boolean;
  /** A fleet key this host cannot take slots of now (etcd does not answer). */
  stalled: boolean;
}

const count = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

/** Rows by key, in code-point order. */
export function limitRows(keys: Record<string, LimitKeyStatus>): LimitRow[] {
  return Object.entries(keys)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, s]) => {
      const inUse = count(s.holders);
      const elsewhere = typeof s.held_elsewhere === 'number' ? s.held_elsewhere : 0;
      const stalled = typeof s.stalled === 'string' && s.stalled !== '' ? s.stalled : '';
      return {
        key,
        inUse,
        concurrency: Number(s.concurrency),
        waiting: count(s.waiting),
        orphaned: Array.isArray(s.holders) ? s.holders.filter((h) => h?.orphaned === true).length : 0,
        source: String(s.source),
        fleet: fleetScope(s),
        full: inUse + elsewhere >= Number(s.concurrency),
        stalled: stalled !== '',
      };
    });
}

/** The SCOPE column is there only when some key is the fleet's: a host outside a fleet sees the table it always did. */
function row(r: LimitRow, scoped: boolean): SafeHtml {
  const scope = scoped ? html`<td class="scope${r.stalled ? ' bad' : ''}">${r.fleet || 'host'}</td>` : '';
  return html`<tr data-key="${r.key}"><td class="key"><code>${r.key}</code></td><td class="in-use num${r.full ? ' busy' : ''}">${r.inUse}/${r.concurrency}</td>
<td class="waiting num">${r.waiting}</td><td class="orphaned num${r.orphaned ? ' bad' : ''}">${r.orphaned}</td><td class="source">${r.source}</td>${scope}</tr>`;
}

/** The keys rq-mgr knows (a key is known while it has holders or waiters), or why rq-mgr could not say. */
export function limitsView(s: LimitsState, urls: Urls): SafeHtml {
  let body: SafeHtml;
  if (!s.ok) body = html`<p class="bad" id="limits-error">${s.error}</p>`;
  else {
    const rows = limitRows(s.keys);
    const scoped = rows.some((r) => r.fleet !== '');
    body = rows.length
      ? html`<div class="table-wrap"><table class="grid" id="limits-table"><thead><tr><th>KEY</th><th>IN USE</th><th>WAITING</th><th>ORPHANED</th><th>SOURCE</th>${scoped ? html`<th>SCOPE</th>` : ''}</tr></thead>
<tbody>${rows.map((r) => row(r, scoped))}</tbody></table></div>`
      : html`<p class="muted" id="limits-empty">No concurrency keys in use.</p>`;
  }
  return html`<section class="card" id="limits" data-refresh="${urls.link('limits.json')}" data-events="${urls.link('events')}">
  <div class="card-head"><h2>Limits</h2><a href="${urls.link('limits.json')}" id="limits-json">json</a></div>
  <div id="limits-list">${body}</div></section>`;
}
