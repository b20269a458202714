// rq UI: the fallback refresh loop of the live sections (live.js): GET a url every 2 s while the page is visible, never two requests at once.

/** One fresh GET of a section's url handed to it; a failed one is dropped (the server may be restarting: the next look tries again). */
export async function look(url, onResponse, accept) {
  try {
    await onResponse(await fetch(url, { headers: { Accept: accept }, cache: 'no-store' }));
  } catch {
    // nothing to show until the next look
  }
}

export function poll(url, onResponse, accept = 'application/json') {
  let busy = false;
  let again = false;
  let stopped = false;
  const tick = async () => {
    if (document.hidden) return;
    // A tick during a slow look is not lost: one more look follows it (still never two at once).
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    do {
      again = false;
      await look(url, onResponse, accept);
    } while (again && !document.hidden && !stopped);
    busy = false;
  };
  const timer = setInterval(tick, 2000);
  document.addEventListener('visibilitychange', tick);
  return () => {
    stopped = true;
    clearInterval(timer);
    document.removeEventListener('visibilitychange', tick);
  };
}
