// What the CLI prints of a line: control characters made visible, so text from a message (a param, a status, a cancel reason) cannot move or retitle the terminal.
import { unicodeEscape } from '../errors.js';

/**
 * C0 controls other than tab and newline, DEL, and C1 controls (0x9b is a CSI on its own): each a terminal may act on;
 * and the characters that show as nothing or reorder the text around them (bidi overrides, zero-width, separators).
 */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * `line` with every such character written as `\uXXXX`: readable, and within a JSON string (`--json`) the same escape
 * JSON itself uses, so a JSON line still parses to the same value. A job's own output (`rq tail`) is not a line and is
 * written as it is, colours and all.
 */
export function visible(line: string): string {
  return line.replace(CONTROLS, unicodeEscape);
}
