// Renders values the way the classic daemon's Ruby `inspect` did, for reply texts clients grep for.

function inspectString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).toUpperCase().padStart(2, '0')}`;
    else out += ch;
  }
  return out + '"';
}

/** `["fail", "msg not found"]`, `{"queue"=>{"name"=>"x"}}`, `nil`, `false`, `3`. */
export function rubyInspect(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return inspectString(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(rubyInspect).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => `${inspectString(k)}=>${rubyInspect(v)}`);
    return `{${entries.join(', ')}}`;
  }
  return inspectString(String(value));
}
