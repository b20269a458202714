// A small POST form with one button, the shape of every action button on the pages.
import { type SafeHtml, html } from './html.js';

/** `fields` become hidden inputs; `confirm` is asked by main.js before the post; `title` says on hover what the button does. */
export function postButton(
  action: string,
  label: string,
  opts: { id?: string; fields?: Record<string, string>; cls?: string; disabled?: boolean; confirm?: string; title?: string } = {},
): SafeHtml {
  const hidden = Object.entries(opts.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<form class="inline" method="post" action="${action}"${opts.confirm ? html` data-confirm="${opts.confirm}"` : ''}>${hidden}<button type="submit"${opts.id ? html` id="${opts.id}"` : ''} class="${opts.cls ?? 'button'}"${opts.title ? html` title="${opts.title}"` : ''}${opts.disabled ? html` disabled` : ''}>${label}</button></form>`;
}
