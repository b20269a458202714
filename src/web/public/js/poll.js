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
  const tick = async () => {
    if (busy || document.hidden) return;
    busy = true;
    await look(url, onResponse, accept);
    busy = false;
  };
  const timer = setInterval(tick, 2000);
  document.addEventListener('visibilitychange', tick);
  return () => {
    clearInterval(timer);
    document.removeEventListener('visibilitychange', tick);
  };
}
