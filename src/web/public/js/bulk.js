// rq bulk action page: while the job runs, its progress and summary follow the queue's bulk events (GET /events, see live.js), swapped in from a fresh copy of this page.
import { live } from './live.js';
import { swapSection } from './swap-section.js';

const box = document.getElementById('bulk-job');
if (box && box.dataset.state === 'running') {
  live(box.dataset.events, location.href, swapSection('bulk-job'), {
    accept: 'text/html',
    wants: (ev) => ev.type === 'bulk' && ev.bulk?.job === box.dataset.job,
  });
}
