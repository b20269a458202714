// The dashboard's "Needs attention" panel: one line per finding of the doctor's list (mgr/doctor.ts), with its fix.
import type { DoctorReport } from '../../mgr/doctor.js';
import type { Urls } from '../urls.js';
import { type SafeHtml, html } from './html.js';

/** Nothing when the list is empty; else a small card above the queue table, each finding and its fix on one line. */
export function attentionView(r: DoctorReport, urls: Urls): SafeHtml {
  if (r.findings.length === 0) return html``;
  const items = r.findings.map(
    (f, i) =>
      html`<li id="attention-${i}" data-severity="${f.severity}" data-subject="${f.subject}"><strong class="${f.severity === 'problem' ? 'bad' : 'muted'}">${f.subject}</strong>: ${f.reason} <span class="muted">Fix: ${f.fix}</span></li>`,
  );
  return html`<section class="card" id="attention"><div class="card-head"><h2>Needs attention</h2><a href="${urls.link('doctor.json')}" id="attention-json">doctor.json</a></div><ul id="attention-list">${items}</ul></section>`;
}
