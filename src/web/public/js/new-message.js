// rq new-message form: sends the browser's UTC offset with the due time, and, when the server sends the form back with a refusal (Post/Redirect/Get), fills in what was typed.

const form = document.getElementById('new-message-form');
const KEY = `rq-new-message:${location.pathname}`;

/** Text, select and radio values by name (files cannot be put back: the browser forbids it). */
function typed() {
  const values = {};
  for (const el of form.elements) {
    if (!el.name || el.type === 'file' || el.type === 'hidden' || el.type === 'submit') continue;
    if ((el.type === 'radio' || el.type === 'checkbox') && !el.checked) continue;
    values[el.name] = el.value;
  }
  return values;
}

function restore(values) {
  for (const el of form.elements) {
    if (!el.name || !(el.name in values) || el.type === 'file' || el.type === 'hidden') continue;
    if (el.type === 'radio' || el.type === 'checkbox') el.checked = el.value === values[el.name];
    else el.value = values[el.name];
  }
}

if (form) {
  form.addEventListener('submit', () => {
    const due = document.getElementById('due_at');
    const tz = document.getElementById('due_tz');
    // The offset of that date, not of today: a due time across a daylight-saving change keeps its wall-clock hour.
    if (due && tz) tz.value = due.value ? String(new Date(due.value).getTimezoneOffset()) : '';
    try {
      sessionStorage.setItem(KEY, JSON.stringify(typed()));
    } catch {
      // storage off: a refused form comes back empty, as without JavaScript
    }
  });
  let saved;
  try {
    saved = sessionStorage.getItem(KEY);
    sessionStorage.removeItem(KEY);
  } catch {
    saved = null;
  }
  // Only after a refusal: a fresh visit starts from the defaults.
  if (saved && document.getElementById('flash-error')) restore(JSON.parse(saved));
}
