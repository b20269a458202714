// rq UI behaviour: live dashboard counts and tracked list (refetched from /dashboard.json and /tracked.json when GET /events says something moved, see live.js).
import { live, reloadPage } from './live.js';
import { relativeTime } from './relative-time.js';

const COLUMNS = ['prep', 'que', 'run', 'err', 'done', 'relayed'];

/** Must match views/format.ts idPart. */
const idPart = (name) => name.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.codePointAt(0).toString(16)}_`);

function countClass(col, n) {
  if (!n) return 'count zero';
  if (col === 'err') return 'count bad';
  if (col === 'done' || col === 'relayed') return 'count good';
  return 'count busy';
}

function duration(seconds) {
  if (seconds === undefined || seconds === null) return '-';
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400),
    h = Math.floor((s % 86400) / 3600),
    m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

function setText(id, text, cls) {
  const el = document.getElementById(id);
  if (!el) return;
  if (el.textContent !== String(text)) el.textContent = String(text);
  if (cls !== undefined && el.className !== cls) el.className = cls;
}

/** Why a queue in SCRIPTERROR or DISK FULL runs no script: the status cell's title and a line under it, as the page first drew them. */
function showReason(id, reason) {
  const cell = document.getElementById(`q-${id}-status`);
  if (!cell) return;
  let line = document.getElementById(`q-${id}-reason`);
  if (!reason) {
    line?.remove();
    cell.removeAttribute('title');
    return;
  }
  cell.title = reason;
  if (!line) {
    line = document.createElement('div');
    line.className = 'muted';
    line.id = `q-${id}-reason`;
    cell.append(line);
  }
  if (line.textContent !== reason) line.textContent = reason;
}

function renderTimers(timers) {
  const box = document.getElementById('timer-list');
  if (!box) return;
  box.replaceChildren();
  if (!timers.ok) {
    const p = document.createElement('p');
    p.className = 'bad';
    p.id = 'timer-error';
    p.textContent = `Error: ${timers.error}`;
    box.append(p);
    return;
  }
  if (timers.timers.length === 0) {
    const p = document.createElement('p');
    p.className = 'muted';
    p.id = 'timer-empty';
    p.textContent = 'No timers.';
    box.append(p);
    return;
  }
  const table = document.createElement('table');
  table.className = 'grid';
  table.id = 'timer-table';
  table.innerHTML = '<thead><tr><th>NAME</th><th>DUE</th></tr></thead><tbody></tbody>';
  for (const t of timers.timers) {
    const tr = document.createElement('tr');
    tr.dataset.timer = t.name;
    const name = document.createElement('td');
    name.textContent = t.name;
    const due = document.createElement('td');
    due.className = 'num';
    due.textContent = relativeTime(t.in);
    tr.append(name, due);
    table.tBodies[0].append(tr);
  }
  box.append(table);
}

function applyDashboard(data, table) {
  const shownNames = [...table.tBodies[0].rows].map((r) => r.dataset.queue).join('\n');
  const newNames = data.queues.map((q) => q.name).join('\n');
  const mgrShownUp = document.getElementById('mgr-state')?.textContent.includes('OPERATIONAL');
  // A queue added or removed, or the supervisor came or went: the page layout changes, so reload it.
  if (shownNames !== newNames || mgrShownUp !== data.mgr.up) {
    reloadPage();
    return;
  }
  for (const q of data.queues) {
    const id = idPart(q.name);
    const shown = q.alive && q.status !== 'DOWN' && q.counts;
    for (const c of COLUMNS) {
      const n = shown ? q.counts[c] : undefined;
      setText(`q-${id}-${c}`, shown ? n : '-', shown ? countClass(c, n) : 'count zero');
    }
    setText(`q-${id}-pid`, q.pid ?? '-');
    setText(`q-${id}-uptime`, q.alive ? duration(q.uptime) : '-');
    const status = q.alive ? (q.status ?? '?') : `DOWN ${q.error ?? ''}`.trim();
    setText(`q-${id}-status`, status, `status ${q.alive && q.status === 'UP' ? 'up' : 'down'}`);
    showReason(id, q.alive ? q.reason : undefined);
  }
  renderTimers(data.timers);
}

/** Uptimes and timer countdowns move on between refreshes (nothing moves on a quiet queue to trigger one). */
function tickClocks(data, since) {
  const elapsed = Math.floor((Date.now() - since) / 1000);
  for (const q of data.queues) if (q.alive && q.uptime !== undefined && q.uptime !== null) setText(`q-${idPart(q.name)}-uptime`, duration(q.uptime + elapsed));
  if (!data.timers.ok) return;
  for (const t of data.timers.timers) {
    const cell = document.querySelector(`#timer-table tr[data-timer="${CSS.escape(t.name)}"] td.num`);
    if (cell) cell.textContent = relativeTime(t.in - elapsed);
  }
}

function startDashboard() {
  const table = document.getElementById('queue-table');
  if (!table) return;
  let shown = null;
  setInterval(() => shown && tickClocks(shown.data, shown.at), 1000);
  live(table.dataset.events, table.dataset.refresh, async (res) => {
    if (!res.ok) return;
    const data = await res.json();
    applyDashboard(data, table);
    shown = { data, at: Date.now() };
  });
}

/** A table cell holding text, or a link (`href`) with that text; never markup from the reply. */
function cell(cls, text, href) {
  const td = document.createElement('td');
  td.className = cls;
  if (href === undefined) td.textContent = String(text);
  else {
    const a = document.createElement('a');
    a.href = href;
    a.textContent = String(text);
    if (cls === 'msg') a.className = 'msg-link';
    td.append(a);
  }
  return td;
}

function note(id, cls, text) {
  const p = document.createElement('p');
  p.id = id;
  p.className = cls;
  p.textContent = text;
  return p;
}

/** Must match views/tags-view.ts trackedView. */
function renderTracked(data, box, root) {
  const q = (name) => `${root}q/${encodeURIComponent(name)}`;
  const parts = [];
  if (data.messages.length === 0) parts.push(note('tracked-empty', 'muted', 'No tracked messages.'));
  else {
    const wrap = document.createElement('div');
    wrap.className = 'table-wrap';
    const table = document.createElement('table');
    table.className = 'grid';
    table.id = 'tracked-table';
    table.innerHTML =
      '<thead><tr><th>QUEUE</th><th>MESSAGE</th><th>STATE</th><th>STATUS</th><th>PRIORITY</th><th>TRACKED SINCE</th></tr></thead><tbody></tbody>';
    for (const m of data.messages) {
      const tr = document.createElement('tr');
      tr.dataset.ref = `${m.queue}/${m.msg_id}`;
      const since = document.createElement('td');
      since.className = 'tagged-at';
      const time = document.createElement('time');
      time.dateTime = m.tagged_at;
      time.textContent = m.tagged_at;
      since.append(time);
      tr.append(
        cell('queue', m.queue, q(m.queue)),
        cell('msg', m.msg_id, `${q(m.queue)}/${encodeURIComponent(m.msg_id)}`),
        cell('state', m.state),
        cell('status', m.status),
        cell('num', m.priority),
        since,
      );
      table.tBodies[0].append(tr);
    }
    wrap.append(table);
    parts.push(wrap);
  }
  const more = data.total - data.messages.length;
  if (more > 0) {
    const p = note('tracked-more', 'muted', `${more} more: `);
    const a = document.createElement('a');
    a.href = `${root}tags/track`;
    a.textContent = 'all tracked';
    p.append(a);
    parts.push(p);
  }
  if (data.unavailable.length) parts.push(note('tracked-unavailable', 'bad', `Not answering: ${data.unavailable.join(', ')}`));
  box.replaceChildren(...parts);
}

function startTracked() {
  const section = document.getElementById('tracked');
  const box = document.getElementById('tracked-list');
  if (!section || !box) return;
  const tracked = (ev) => Array.isArray(ev.tags) && ev.tags.includes('track');
  live(
    section.dataset.events,
    section.dataset.refresh,
    async (res) => {
      if (res.ok) renderTracked(await res.json(), box, section.dataset.root);
    },
    { wants: tracked },
  );
}

startDashboard();
startTracked();
