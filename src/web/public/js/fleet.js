// rq fleet page: the fleet section follows rq-mgr's view of etcd, this page fetched again every 2 s (poll.js) and its #fleet swapped in whole; GET /events streams this host's moves only, never another host's.
import { poll } from './poll.js';

if (document.getElementById('fleet')) {
  poll(
    location.href,
    async (res) => {
      if (!res.ok) return;
      const fresh = new DOMParser().parseFromString(await res.text(), 'text/html').getElementById('fleet');
      const now = document.getElementById('fleet');
      if (fresh && now) now.replaceWith(document.importNode(fresh, true));
    },
    'text/html',
  );
}
