// The live tail page: a dark terminal-like <pre> that public/js/tail.js fills from the SSE stream.
import { type SafeHtml, html } from './html.js';

export interface TailViewOptions {
  /** `<queue> : <id> : <file>`, the id breakable only at its dots (views/id-text.ts). */
  title: string | SafeHtml;
  /** SSE stream of the log (live), or null for a file that is shown once (attachments). */
  eventsUrl: string | null;
  rawUrl: string;
  messageUrl: string;
}

export function tailView(o: TailViewOptions): SafeHtml {
  return html`<div class="tail">
  <div class="tail-bar">
    <span class="tail-title" id="tail-title">${o.title}</span>
    <span id="tail-status" class="tail-status" aria-live="polite">connecting…</span>
    <span id="tail-lines" class="muted"></span>
    <label class="tail-follow"><input type="checkbox" id="tail-follow" checked> Tail scroll to bottom</label>
    <a href="${o.rawUrl}" id="tail-raw" target="_blank" rel="noopener">raw log</a>
    <a href="${o.messageUrl}" id="tail-message" target="_top">message</a>
  </div>
  <pre id="tail-log" class="tail-log" data-events="${o.eventsUrl ?? ''}" data-source="${o.rawUrl}"></pre>
</div>`;
}
