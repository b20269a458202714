// rq queue page: its counts, message lists, tags and waiting breakdown follow the queue live (this page fetched again when GET /events says something moved, see live.js), patched in place.
import { live, reloadPage } from './live.js';

/** Parts of the page that follow the queue, each swapped whole from a fresh copy of the page. */
const REGIONS = ['queue-pid', 'queue-uptime', 'queue-tags', 'waiting', 'message-lists', 'relayed'];

async function apply(res) {
  if (!res.ok) return;
  const fresh = new DOMParser().parseFromString(await res.text(), 'text/html');
  const text = (doc, id) => doc.getElementById(id)?.textContent ?? null;
  // Another status changes the buttons and what is shown at all, and a section that came or went has no
  // place to go: the page is loaded again rather than patched.
  const reshaped = REGIONS.some((id) => !document.getElementById(id) !== !fresh.getElementById(id));
  // The reason beside a SCRIPTERROR or DISK FULL badge can change while the status stays.
  if (
    text(fresh, 'queue-status') !== text(document, 'queue-status') ||
    text(fresh, 'queue-status-reason') !== text(document, 'queue-status-reason') ||
    reshaped
  ) {
    reloadPage();
    return;
  }
  for (const id of REGIONS) {
    const now = fresh.getElementById(id);
    if (now) document.getElementById(id).replaceWith(document.importNode(now, true));
  }
}

const head = document.getElementById('queue-head');
if (head) live(head.dataset.events, location.href, apply, { accept: 'text/html' });
