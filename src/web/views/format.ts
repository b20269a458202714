// Small display helpers shared by the views: durations, counts, date grouping of message ids.

/** `3d 4h`, `5m 2s`, `12s`: an uptime an operator reads at a glance. */
export function duration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '-';
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/** CSS class of a count cell (spec §9.4): 0 plain, >0 yellow; ERR red, DONE/RELAYED green. */
export function countClass(column: string, n: number | undefined): string {
  if (!n) return 'count zero';
  if (column === 'err') return 'count bad';
  if (column === 'done' || column === 'relayed') return 'count good';
  return 'count busy';
}

/** Groups ids under their `YYYYMMDD` prefix, keeping the given order. */
export function byDay<T>(items: T[], idOf: (t: T) => string): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const day = /^\.?(\d{8})/.exec(idOf(item))?.[1] ?? 'other';
    const list = groups.get(day);
    if (list) list.push(item);
    else groups.set(day, [item]);
  }
  return [...groups];
}

/** `2026-11-21` from `20261121`. */
export function dayLabel(day: string): string {
  return /^\d{8}$/.test(day) ? `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6)}` : day;
}

/** A stable element id fragment for a queue name (names may hold characters ids dislike). */
export function idPart(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, (c) => `_${c.codePointAt(0)!.toString(16)}_`);
}

/** One unit, singular or plural: `1 sec`, `13 secs`, `2 mins`. */
function amount(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** A span of whole seconds in its largest sensible unit: `13 secs`, `5 mins`, `3 hours`, `2 days`. */
function span(s: number): string {
  if (s < 120) return amount(s, 'sec');
  if (s < 7200) return amount(Math.round(s / 60), 'min');
  if (s < 172_800) return amount(Math.round(s / 3600), 'hour');
  return amount(Math.round(s / 86_400), 'day');
}

/**
 * A time relative to now, never negative: `in 13 secs` ahead, `13 secs ago` behind, `due now`
 * within the second (the classic list printed "in -13 secs" for a message past its due).
 * Must match public/js/relative-time.js.
 */
export function relativeTime(seconds: number): string {
  if (!Number.isFinite(seconds)) return '-';
  const s = Math.round(seconds);
  if (s === 0) return 'due now';
  return s > 0 ? `in ${span(s)}` : `${span(-s)} ago`;
}
