// rq fleet page: the fleet section follows rq-mgr's view of etcd, this page fetched again every 2 s (poll.js) and its #fleet swapped in whole; GET /events streams this host's moves only, never another host's.
import { poll } from './poll.js';
import { swapSection } from './swap-section.js';

if (document.getElementById('fleet')) poll(location.href, swapSection('fleet'), 'text/html');
