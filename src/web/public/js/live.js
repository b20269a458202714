// rq UI: live sections look again when the server says something moved (one EventSource on GET /events per url), at most once per 250 ms burst; they poll (poll.js) only while the stream cannot connect.
import { look, poll } from './poll.js';

/** Events closer together than this make one refresh. */
const BURST_MS = 250;
/** A stream the browser gave up on (refused: too many streams) is opened again after this long; the sections poll meanwhile. */
const REOPEN_MS = 30_000;

/** events url → { sections, es }: the sections of a page share one stream. */
const streams = new Map();

/** `body[data-live]`: open while every stream is, polling when one is down (tests and curious operators read it). */
function showState() {
  const all = [...streams.values()];
  document.body.dataset.live = all.every((s) => s.open) ? 'open' : all.some((s) => s.failed) ? 'polling' : 'connecting';
}

/**
 * Set once this document is on its way out: a form the operator sent, or a reload a section asked for.
 * A live reload then would abort the form's request (a Pause whose answer and flash are lost), and a
 * page about to go is not settled.
 */
let leaving = false;
// Bubbling to the window: confirm.js (on the document) has already stopped a submit the operator declined,
// and a form that sends itself by fetch (bulk.js) has prevented the default and stays.
addEventListener('submit', (e) => {
  if (e.defaultPrevented) return;
  leaving = true;
  document.body.dataset.settled = 'false';
});

/** Sections with a look scheduled or under way: `body[data-settled]` says whether there are none (tests wait on it, never on time). */
let pending = 0;
function setPending(delta) {
  pending += delta;
  document.body.dataset.settled = pending === 0 && !leaving ? 'true' : 'false';
}

/** Loads the page again because its shape changed, unless it is already leaving (see `leaving`). */
export function reloadPage() {
  if (leaving) return;
  leaving = true;
  document.body.dataset.settled = 'false';
  location.reload();
}

function connect(s) {
  const es = new EventSource(s.url);
  s.es = es;
  const each = (fn) => {
    for (const section of s.sections) fn(section);
  };
  es.addEventListener('ready', () => {
    s.open = true;
    s.failed = false;
    showState();
    // What moved between the page's rendering (or the outage) and now was not streamed: one look.
    each((section) => {
      section.stopPolling();
      section.schedule();
    });
  });
  es.addEventListener('message', (e) => {
    let ev;
    try {
      ev = JSON.parse(e.data);
    } catch {
      return;
    }
    each((section) => {
      section.onEvent?.(ev);
      // A progress line changes a status text, never a count or a list: a section that shows it reads it from the event (onEvent).
      if (ev.type !== 'progress' && section.wants(ev)) section.schedule();
    });
  });
  es.addEventListener('gap', () => each((section) => section.schedule()));
  es.addEventListener('error', () => {
    s.open = false;
    s.failed = true;
    showState();
    each((section) => section.startPolling());
    // CONNECTING: the browser retries by itself and `ready` comes again; CLOSED: it gave up.
    if (es.readyState === EventSource.CLOSED) setTimeout(() => connect(s), REOPEN_MS);
  });
}

/**
 * Keeps a section fresh: `onResponse(fetch(url))` after a burst of the stream's events that `wants`
 * accepts, after a gap, and once the stream is up; every 2 s while the stream is down. `onEvent` sees
 * every event as it comes (a message page's progress line). A drop-in for poll(url, onResponse): a page
 * without an events url, or a browser without EventSource, just polls.
 */
export function live(eventsUrl, url, onResponse, { wants = () => true, accept = 'application/json', onEvent } = {}) {
  if (!eventsUrl || typeof EventSource === 'undefined') return void poll(url, onResponse, accept);
  let timer = null;
  let busy = false;
  let again = false;
  let missed = false;
  let stopPoll = null;
  const refresh = async () => {
    timer = null;
    if (document.hidden) {
      missed = true;
      return setPending(-1);
    }
    if (busy) {
      again = true;
      return setPending(-1);
    }
    busy = true;
    await look(url, onResponse, accept);
    busy = false;
    // Events that came during the request: the answer may predate them.
    if (again) section.schedule();
    again = false;
    setPending(-1);
  };
  const section = {
    wants,
    onEvent,
    schedule: () => {
      if (timer !== null) return;
      setPending(1);
      timer = setTimeout(refresh, BURST_MS);
    },
    startPolling: () => {
      stopPoll ??= poll(url, onResponse, accept);
    },
    stopPolling: () => {
      stopPoll?.();
      stopPoll = null;
    },
  };
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden && missed) {
      missed = false;
      section.schedule();
    }
  });
  let s = streams.get(eventsUrl);
  if (!s) {
    s = { url: eventsUrl, sections: new Set(), es: null, open: false, failed: false };
    streams.set(eventsUrl, s);
    s.sections.add(section);
    showState();
    connect(s);
  } else s.sections.add(section);
}
