// Live tail page: follows the job log over SSE (with the status line as the script reports it), renders ANSI colours with ansi_up (HTML-escaped), links URLs.
import { AnsiUp } from './ansi_up.js';

const pre = document.getElementById('tail-log');
const statusEl = document.getElementById('tail-status');
const linesEl = document.getElementById('tail-lines');
const follow = document.getElementById('tail-follow');
const ansi = new AnsiUp();
ansi.escape_html = true;
// Classes, not ansi_up's inline colours: its dark blue/black/magenta were unreadable on the black log (palette in rq.css).
ansi.use_classes = true;
let lines = 0;

// Runs on ansi_up's already-escaped output, outside tags only; entities end a URL.
const URL_RE = /https?:\/\/(?:(?!&quot;|&#x27;|&lt;|&gt;)[^\s<>"'])+/g;
function linkify(markup) {
  return markup
    .split(/(<[^>]*>)/)
    .map((part) => (part.startsWith('<') ? part : part.replace(URL_RE, (url) => `<a href="${url}" target="_blank" rel="noopener noreferrer">${url}</a>`)))
    .join('');
}

function atBottom() {
  return pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
}

function append(text) {
  const stick = follow.checked;
  pre.insertAdjacentHTML('beforeend', linkify(ansi.ansi_to_html(text)));
  lines += (text.match(/\n/g) || []).length;
  linesEl.textContent = `${lines} lines`;
  if (stick) pre.scrollTop = pre.scrollHeight;
}

/** `state`: the message's state, coloured as its outcome (done green, err red, relayed blue, run amber; rq.css). */
function setStatus(text, cls, state) {
  statusEl.textContent = text;
  statusEl.className = `tail-status ${cls ?? ''}${state ? ` state-${state}` : ''}`;
  if (state) statusEl.dataset.state = state;
}

// Scrolling up stops following; scrolling back to the bottom resumes it.
pre.addEventListener('scroll', () => {
  follow.checked = atBottom();
});
follow.addEventListener('change', () => {
  if (follow.checked) pre.scrollTop = pre.scrollHeight;
});

function live(url) {
  const es = new EventSource(`${url}?offset=0`);
  es.addEventListener('open', () => setStatus('streaming', 'live'));
  es.addEventListener('log', (e) => append(JSON.parse(e.data)));
  // At each move, and each progress line of a run (the server relays the queue's progress events).
  es.addEventListener('state', (e) => {
    const info = JSON.parse(e.data);
    setStatus(info.status, 'live', info.state);
  });
  es.addEventListener('end', (e) => {
    es.close();
    const info = JSON.parse(e.data);
    setStatus(`ended: ${info.status}`, 'ended', info.state ?? 'gone');
    pre.dataset.ended = info.state ?? 'gone';
  });
  // EventSource reconnects by itself (resuming from the last byte offset); say so meanwhile.
  es.addEventListener('error', () => {
    if (es.readyState === EventSource.CONNECTING) setStatus('reconnecting…', 'failed');
    else if (es.readyState === EventSource.CLOSED) setStatus('disconnected', 'failed');
  });
}

async function once(url) {
  try {
    const res = await fetch(url, { cache: 'no-store' });
    if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
    append(await res.text());
    setStatus('complete', 'ended');
    pre.dataset.ended = 'file';
  } catch (err) {
    setStatus(`failed: ${err.message}`, 'failed');
  }
}

if (pre.dataset.events) live(pre.dataset.events);
else once(pre.dataset.source);
