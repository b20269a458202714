// rq UI: the one refresh loop of the live sections: GET a JSON url every 2 s while the page is visible, never two requests at once.
export function poll(url, onResponse) {
  let busy = false;
  const tick = async () => {
    if (busy || document.hidden) return;
    busy = true;
    try {
      await onResponse(await fetch(url, { headers: { Accept: 'application/json' }, cache: 'no-store' }));
    } catch {
      // The server may be restarting; the next tick tries again.
    } finally {
      busy = false;
    }
  };
  setInterval(tick, 2000);
  document.addEventListener('visibilitychange', tick);
}
