// How every entry point reads a true/false field: JSON booleans, and the texts the CLI and HTML forms send (a checkbox says "on").

const TRUE = new Set<unknown>([true, 'true', '1', 1, 'on']);
const FALSE = new Set<unknown>([undefined, null, '', false, 'false', '0', 0, 'off']);

/** true or false, or undefined when `v` is neither (the caller refuses it, naming the field). */
export function flagValue(v: unknown): boolean | undefined {
  if (TRUE.has(v)) return true;
  return FALSE.has(v) ? false : undefined;
}
