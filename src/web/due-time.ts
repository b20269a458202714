// The new-message form's due time: a datetime-local text and the browser's UTC offset, read as epoch seconds.
import { invalidField } from '../errors.js';

const LOCAL_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?$/;
const DUE_EXPECTED = "a date and time such as 2026-11-21T20:00 (the form's date picker), or nothing to run it now";
/** Minutes, as JavaScript's getTimezoneOffset() gives them: UTC-14 … UTC+14. */
const MAX_OFFSET_MIN = 14 * 60;

/**
 * `due_at` (`YYYY-MM-DDTHH:MM[:SS]`, what `<input type="datetime-local">` sends: a wall-clock time
 * without a zone) and `due_tz` (the browser's offset for that date, minutes behind UTC, filled in by
 * new-message.js; absent, as from a browser without JavaScript, means UTC) as epoch seconds, or
 * undefined when no due time was given. A text that is not such a time is a 400 naming the field.
 */
export function dueFromForm(dueAt: string | undefined, dueTz: string | undefined): number | undefined {
  if (dueAt === undefined || dueAt.trim() === '') return undefined;
  const m = LOCAL_RE.exec(dueAt.trim());
  if (!m) throw invalidField('due_at', DUE_EXPECTED, dueAt);
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v ?? 0));
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  // Date.UTC rolls 2026-02-30 over into March: a date that does not exist is refused, not moved.
  if (y < 1970 || back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
    throw invalidField('due_at', DUE_EXPECTED, dueAt);
  }
  let offset = 0;
  if (dueTz !== undefined && dueTz !== '') {
    offset = Number(dueTz);
    if (!Number.isInteger(offset) || Math.abs(offset) > MAX_OFFSET_MIN)
      throw invalidField('due_tz', `minutes behind UTC, a whole number from -${MAX_OFFSET_MIN} to ${MAX_OFFSET_MIN}`, dueTz);
  }
  return Math.floor(ms / 1000) + offset * 60;
}
