// The message page's Dependencies card (rq-beyond §B8): its refs with their states, the failure policy, undepend buttons, its dependents.
import type { MessageView } from '../message-files.js';
import type { Urls } from '../urls.js';
import { type SafeHtml, html } from './html.js';
import { postButton } from './queue-view.js';
import { dependsLink } from './waiting-view.js';

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function doneMap(v: unknown): Record<string, string> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** The fields this card shows, left out of the page's plain field list. */
export const DEPENDS_FIELDS = ['depends', 'depends_fail', 'depends_done', 'dependents'];

/**
 * `#dependencies`: one row per ref (`tr[data-ref]`, `td.state` = `done`, `err:exhausted`, `awaited`…),
 * and while the message waits on them a Stop waiting button per awaited ref and `#btn-undepend-all`,
 * each behind a confirmation. Empty when the message has no dependencies and no dependents.
 */
export function dependsView(m: MessageView, q: string, urls: Urls): SafeHtml {
  const depends = strings(m.depends);
  const done = doneMap(m.depends_done);
  const waiting = m.waiting as { reason?: unknown; waiting_on?: unknown } | undefined;
  const awaited = waiting?.reason === 'dependencies' ? strings(waiting.waiting_on) : [];
  const dependents = strings(m.dependents);
  const refs = [...new Set([...depends, ...Object.keys(done), ...awaited])];
  if (refs.length === 0 && dependents.length === 0) return html``;
  const action = urls.msg(q, m.msg_id, '/undepend');
  const rows = refs.map((ref) => {
    const isAwaited = awaited.includes(ref);
    const state = done[ref] !== undefined ? `${done[ref]}${isAwaited ? ' (still awaited)' : ''}` : isAwaited ? 'awaited' : 'not resolved';
    const button = isAwaited
      ? postButton(action, 'Stop waiting', { fields: { depends: ref }, cls: 'button small undepend-one', confirm: `Stop waiting for ${ref}?` })
      : '';
    return html`<tr data-ref="${ref}"><td class="ref">${dependsLink(ref, urls)}</td><td class="state">${state}</td><td class="action">${button}</td></tr>`;
  });
  const table = refs.length
    ? html`<div class="table-wrap"><table class="grid" id="depends-table"><thead><tr><th>DEPENDS ON</th><th>STATE</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>`
    : '';
  const all = awaited.length
    ? html`<p class="undepend-all">${postButton(action, `Stop waiting for all ${awaited.length}`, { id: 'btn-undepend-all', fields: { all: 'true' }, cls: 'button small danger', confirm: `Stop waiting for ${awaited.length === 1 ? 'its dependency' : `all ${awaited.length} dependencies`} of ${m.msg_id}? It can then run at once.` })}</p>`
    : '';
  const policy = typeof m.depends_fail === 'string' ? m.depends_fail : 'fail';
  const head = refs.length
    ? html`<span class="muted">if one fails: <span id="depends-fail">${policy}</span>${m.depends_fail === undefined ? ' (default)' : ''}</span>`
    : '';
  const list = dependents.length
    ? html`<p id="dependents">Dependents (${dependents.length}): ${dependents.map((r, i) => html`${i ? ', ' : ''}${dependsLink(r, urls)}`)}</p>`
    : '';
  return html`<section class="card" id="dependencies"><div class="card-head"><h3>Dependencies</h3>${head}</div>${table}${all}${list}</section>`;
}
