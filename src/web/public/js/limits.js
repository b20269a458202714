// rq dashboard's #limits (rq-beyond §B12): redrawn from /limits.json when GET /events says something moved (slots follow starts and ends; live.js); the DOM is built node by node, never from markup.
import { live } from './live.js';

/** Must match views/limits-view.ts limitRows (its `fleet` text is ipc/limit-scope.ts fleetScope's). */
function limitRows(keys) {
  const count = (v) => (Array.isArray(v) ? v.length : 0);
  return Object.keys(keys)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((key) => {
      const s = keys[key] ?? {};
      const holders = Array.isArray(s.holders) ? s.holders : [];
      const elsewhere = typeof s.held_elsewhere === 'number' ? s.held_elsewhere : 0;
      const stalled = typeof s.stalled === 'string' && s.stalled !== '' ? s.stalled : '';
      return {
        key,
        inUse: holders.length,
        concurrency: Number(s.concurrency),
        waiting: count(s.waiting),
        orphaned: holders.filter((h) => h?.orphaned === true).length,
        source: String(s.source),
        fleet: s.scope === 'fleet' ? `fleet${elsewhere ? ` (${elsewhere} held on other hosts)` : ''}${stalled ? ` stalled: ${stalled}` : ''}` : '',
        full: holders.length + elsewhere >= Number(s.concurrency),
        stalled: stalled !== '',
      };
    });
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'dataset') Object.assign(node.dataset, v);
    else node[k] = v;
  }
  node.append(...children);
  return node;
}

/** Must match views/limits-view.ts limitsView. */
function renderLimits(data, box) {
  const rows = limitRows(data);
  if (rows.length === 0) {
    box.replaceChildren(el('p', { id: 'limits-empty', className: 'muted' }, 'No concurrency keys in use.'));
    return;
  }
  // The SCOPE column only when some key is the fleet's.
  const scoped = rows.some((r) => r.fleet !== '');
  const titles = ['KEY', 'IN USE', 'WAITING', 'ORPHANED', 'SOURCE', ...(scoped ? ['SCOPE'] : [])];
  const head = el('tr', {}, ...titles.map((t) => el('th', {}, t)));
  const body = rows.map((r) =>
    el(
      'tr',
      { dataset: { key: r.key } },
      el('td', { className: 'key' }, el('code', {}, r.key)),
      el('td', { className: `in-use num${r.full ? ' busy' : ''}` }, `${r.inUse}/${r.concurrency}`),
      el('td', { className: 'waiting num' }, String(r.waiting)),
      el('td', { className: `orphaned num${r.orphaned ? ' bad' : ''}` }, String(r.orphaned)),
      el('td', { className: 'source' }, r.source),
      ...(scoped ? [el('td', { className: `scope${r.stalled ? ' bad' : ''}` }, r.fleet || 'host')] : []),
    ),
  );
  const table = el('table', { className: 'grid', id: 'limits-table' }, el('thead', {}, head), el('tbody', {}, ...body));
  box.replaceChildren(el('div', { className: 'table-wrap' }, table));
}

function renderError(text, box) {
  box.replaceChildren(el('p', { id: 'limits-error', className: 'bad' }, text));
}

function startLimits() {
  const section = document.getElementById('limits');
  const box = document.getElementById('limits-list');
  if (!section || !box) return;
  live(section.dataset.events, section.dataset.refresh, async (res) => {
    const body = await res.json();
    if (res.ok) renderLimits(body, box);
    // ["fail", "rq-mgr did not answer limit_status (…)"]: say so, as the page itself would.
    else if (Array.isArray(body) && typeof body[1] === 'string') renderError(body[1], box);
  });
}

startLimits();
