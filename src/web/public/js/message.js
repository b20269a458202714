// rq message page: follows its message on GET /events (live.js) — the status line as the script reports it, and its state, actions, timeline and attachments fetched again when it moves (a run's end).
import { live, reloadPage } from './live.js';

/** Parts of the page that change when the message moves, each swapped whole from a fresh copy of the page. */
const REGIONS = ['message-state', 'message-actions', 'message-summary', 'message-full', 'timeline', 'attachments-section'];

const head = document.getElementById('message-head');
const id = document.getElementById('message-id')?.textContent;

/** Deleted meanwhile: say so rather than show a message that is gone. */
function showGone() {
  document.body.dataset.gone = 'true';
  const badge = document.getElementById('message-state');
  if (badge) {
    badge.replaceChildren('gone');
    badge.className = 'status-badge state-gone';
    badge.dataset.state = 'gone';
  }
}

/** The status line as the script reports it (a relayed status holds a link: the whole cell is swapped on a move instead). */
function onEvent(ev) {
  if (ev.msg_id !== id) return;
  if (ev.type === 'removed') return showGone();
  if (ev.type !== 'progress') return;
  const cell = document.getElementById('field-status');
  // Spaced as the page writes it (message-view.ts fieldRow), for clients that read the page's text.
  if (cell && cell.textContent.trim() !== ev.status) cell.textContent = ` ${ev.status} `;
}

async function apply(res) {
  if (res.status === 404) return showGone();
  if (!res.ok) return;
  const fresh = new DOMParser().parseFromString(await res.text(), 'text/html');
  // A prep message committed changes the page's whole shape (its upload form, its tail): loaded again instead.
  if ((fresh.getElementById('upload-form') === null) !== (document.getElementById('upload-form') === null)) {
    reloadPage();
    return;
  }
  for (const region of REGIONS) {
    const now = fresh.getElementById(region);
    const was = document.getElementById(region);
    if (!now || !was) continue;
    // The full field list keeps whether the operator opened it.
    if (region === 'message-full') now.open = was.open;
    was.replaceWith(document.importNode(now, true));
  }
  document.body.dataset.state = document.getElementById('message-state')?.dataset.state ?? '';
}

if (head && id) {
  document.body.dataset.state = document.getElementById('message-state')?.dataset.state ?? '';
  // A removal needs no look: there is nothing left to fetch.
  live(head.dataset.events, location.href, apply, { accept: 'text/html', onEvent, wants: (ev) => ev.type !== 'removed' });
}
