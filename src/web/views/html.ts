// Auto-escaping HTML templates: every interpolated value is escaped unless it is already SafeHtml.

/** Markup that is known to be safe: produced by `html` or explicitly marked with `raw`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** Marks trusted markup (our own constants only; never data from a request or a message). */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

function render(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  // null, undefined and false render as nothing so `${cond && html`...`}` reads naturally.
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/** Tagged template: `html\`<td>${name}</td>\`` escapes `name`; arrays are rendered item by item. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

/** An href that cannot run script: http(s) URLs and paths pass, anything else becomes "#". */
export function safeHref(url: unknown): string {
  if (typeof url !== 'string') return '#';
  if (/^https?:\/\//i.test(url)) return url;
  if (url.startsWith('/') && !url.startsWith('//')) return url;
  return '#';
}
