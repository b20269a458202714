// The page frame every HTML page shares: head, header with environment, flash area, footer with server time.
import type { Flash } from '../flash.js';
import type { Urls } from '../urls.js';
import { type SafeHtml, html } from './html.js';

export interface LayoutOptions {
  /** Queue the page is about: the title becomes `RQ :: <q>` (classic). */
  queue?: string;
  env: string | null;
  flash: Flash | null;
  urls: Urls;
  now: Date;
  /** Script modules under public/js/ this page needs. */
  scripts?: string[];
  /** Stylesheets under public/css/ this page needs besides rq.css. */
  styles?: string[];
  /** A standalone page (tail view in an iframe): no header or footer. */
  bare?: boolean;
  /** This host is in a fleet (config.json's "fleet"): the header links the fleet page. */
  fleet?: boolean;
}

/** The environment as a CSS class: production, stage, or anything else (wheat). */
function envClass(env: string | null): string {
  const cls = (env ?? 'development').replace(/[^A-Za-z0-9_-]/g, '_');
  return `env-${cls} ${cls}`;
}

function flashArea(flash: Flash | null): SafeHtml {
  if (!flash) return html``;
  return flash.kind === 'notice'
    ? html`<div id="flash-notice" class="flash flash-notice" role="status">${flash.html}</div>`
    : html`<div id="flash-error" class="flash flash-error" role="alert">${flash.html}</div>`;
}

export function layout(o: LayoutOptions, body: SafeHtml): SafeHtml {
  const title = o.queue === undefined ? 'RQ' : `RQ :: ${o.queue}`;
  // confirm.js on every full page: any of them may hold a destructive form (data-confirm); table-scroll.js marks tables wider than the screen.
  const scripts = [...(o.bare ? [] : ['confirm.js', 'table-scroll.js']), ...(o.scripts ?? [])].map(
    (s) => html`<script type="module" src="${o.urls.link(`js/${s}`)}"></script>`,
  );
  const styles = (o.styles ?? []).map((s) => html`<link rel="stylesheet" href="${o.urls.link(`css/${s}`)}">`);
  const head = html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="stylesheet" href="${o.urls.link('css/rq.css')}">${styles}
<link rel="icon" href="${o.urls.link('favicon.ico')}">
${scripts}
</head>`;
  if (o.bare) return html`${head}<body class="${envClass(o.env)} bare" data-root="${o.urls.base}">${flashArea(o.flash)}${body}</body></html>`;
  return html`${head}
<body class="${envClass(o.env)}" data-root="${o.urls.base}">
<header class="topbar">
  <a class="brand" id="nav-home" href="${o.urls.link()}">RQ</a>
  ${o.queue === undefined ? '' : html`<span class="crumb">/</span><a class="crumb" id="nav-queue" href="${o.urls.queue(o.queue)}">${o.queue}</a>`}
  ${o.fleet ? html`<a class="crumb nav-link" id="nav-fleet" href="${o.urls.link('fleet')}">Fleet</a>` : ''}
  <span class="env-name" id="env-name">${o.env ?? ''}</span>
</header>
<main>
${flashArea(o.flash)}
${body}
</main>
<footer class="footer" id="footer">server time: <time id="server-time" datetime="${o.now.toISOString()}">${o.now.toString()}</time></footer>
</body>
</html>
`;
}
