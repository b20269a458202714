// rq UI: the fallback refresh loop of the live sections (live.js): GET a url every 2 s while the page is visible, never two requests at once.
export function poll(url, onResponse, accept = 'application/json') {
  let busy = false;
  const tick = async () => {
    if (busy || document.hidden) return;
    busy = true;
    try {
      await onResponse(await fetch(url, { headers: { Accept: accept }, cache: 'no-store' }));
    } catch {
      // The server may be restarting; the next tick tries again.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(tick, 2000);
  document.addEventListener('visibilitychange', tick);
  return () => {
    clearInterval(timer);
    document.removeEventListener('visibilitychange', tick);
  };
}
