// A message's time (created, due) as ISO 8601 text for pages and listings, or null for a number no date can hold: a msg written by hand or by an older rq is shown, not a failed page.

/** `ms` (epoch milliseconds) as `2026-12-06T04:10:00.000Z`, or null when it is not a time a Date holds (NaN, beyond ±275,760 years). */
export function isoTime(ms: number): string | null {
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}
