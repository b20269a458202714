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
