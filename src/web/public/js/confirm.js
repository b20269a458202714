// rq UI: every form with data-confirm asks before it is sent (delete, destroy, cancel, down, restart, requeue-all…); loaded by every page.

// One listener on the document, not one per form: parts of a page swapped in by a live refresh
// (queue.js, message.js) bring new forms that must ask too.
document.addEventListener(
  'submit',
  (e) => {
    const form = e.target;
    if (!(form instanceof HTMLFormElement) || form.dataset.confirm === undefined) return;
    if (!confirm(form.dataset.confirm)) {
      e.preventDefault();
      e.stopImmediatePropagation();
    }
  },
  true,
);
