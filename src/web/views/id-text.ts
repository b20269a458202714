// Message ids, refs and their URLs as text a line may break only after a separator (a dot or a slash), never inside one of their numbers.
import { type SafeHtml, html } from './html.js';

/**
 * `20261201.2257.53.369.2150753` with a `<wbr>` after each dot and slash: on a phone it wraps as
 * `20261201.2257.53.369.` / `2150753`, not in the middle of a number. The text (what is read, copied
 * and matched by scripts reading the DOM's text) is unchanged.
 */
export function idText(text: string): SafeHtml {
  return html`${text.split(/(?<=[./])(?=.)/).map((part, i) => (i === 0 ? part : html`<wbr>${part}`))}`;
}
