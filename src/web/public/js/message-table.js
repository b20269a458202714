// rq queue page's message list: the "select this page" box, and row selections kept while queue.js swaps in a fresh copy of the list (it follows the queue live).
const selected = new Set();

function boxes() {
  return [...document.querySelectorAll('input.row-select')];
}

/** Puts the remembered selection back on whatever rows are on the page now, and the page box in step with them. */
function restore() {
  const rows = boxes();
  for (const b of rows) if (b.checked !== selected.has(b.value)) b.checked = selected.has(b.value);
  const page = document.getElementById('select-page');
  const all = rows.length > 0 && rows.every((b) => b.checked);
  if (page && page.checked !== all) page.checked = all;
  // Written only when it changes: the observer below sees this text change too, and must come to rest.
  const count = document.getElementById('bulk-selected-count');
  if (count && count.textContent !== String(selected.size)) count.textContent = String(selected.size);
}

document.addEventListener('change', (e) => {
  const t = e.target;
  if (!(t instanceof HTMLInputElement)) return;
  if (t.id === 'select-page') {
    for (const b of boxes()) {
      if (t.checked) selected.add(b.value);
      else selected.delete(b.value);
    }
  } else if (t.classList.contains('row-select')) {
    if (t.checked) selected.add(t.value);
    else selected.delete(t.value);
  } else return;
  restore();
});

// A selected row that left this page's view (swapped away) is still posted: its box is re-added to the form.
document.getElementById('bulk-form')?.addEventListener('submit', (e) => {
  const form = e.currentTarget;
  const shown = new Set(boxes().map((b) => b.value));
  for (const id of selected) {
    if (shown.has(id)) continue;
    const hidden = document.createElement('input');
    hidden.type = 'hidden';
    hidden.name = 'ids[]';
    hidden.value = id;
    form.appendChild(hidden);
  }
});

// queue.js swaps #message-lists whole: the list card's children change, not the rows in place.
const card = document.getElementById('list-card');
if (card) new MutationObserver(restore).observe(card, { childList: true });
