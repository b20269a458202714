// rq UI: a table wider than its box (the dashboard on a phone) shows that it scrolls: its .table-wrap is marked scrolls-right / scrolls-left while there is more that way, and rq.css fades that edge; loaded by every page.

/** Marks one scroller by where it can still go. */
function mark(wrap) {
  const more = wrap.scrollWidth - wrap.clientWidth;
  const right = more > 1 && wrap.scrollLeft < more - 1;
  const left = more > 1 && wrap.scrollLeft > 1;
  // Written only when it changes: the observer below sees attribute changes too, and must come to rest.
  if (wrap.classList.contains('scrolls-right') !== right) wrap.classList.toggle('scrolls-right', right);
  if (wrap.classList.contains('scrolls-left') !== left) wrap.classList.toggle('scrolls-left', left);
}

let queued = false;
/** Every scroller of the page, once per frame at most: a live refresh may swap tables in, a resize or a font load change their widths. */
function markAll() {
  if (queued) return;
  queued = true;
  requestAnimationFrame(() => {
    queued = false;
    for (const wrap of document.querySelectorAll('.table-wrap')) mark(wrap);
  });
}

document.addEventListener(
  'scroll',
  (e) => {
    if (e.target instanceof Element && e.target.classList.contains('table-wrap')) mark(e.target);
  },
  true,
);
window.addEventListener('resize', markAll);
new MutationObserver(markAll).observe(document.documentElement, { childList: true, subtree: true });
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', markAll);
else markAll();
