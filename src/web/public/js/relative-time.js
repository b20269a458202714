// rq UI: a time relative to now in words, never negative ("in 13 secs", "13 secs ago", "due now"). Must match views/format.ts relativeTime.

const amount = (n, unit) => `${n} ${unit}${n === 1 ? '' : 's'}`;

function span(s) {
  if (s < 120) return amount(s, 'sec');
  if (s < 7200) return amount(Math.round(s / 60), 'min');
  if (s < 172800) return amount(Math.round(s / 3600), 'hour');
  return amount(Math.round(s / 86400), 'day');
}

export function relativeTime(seconds) {
  if (!Number.isFinite(seconds)) return '-';
  const s = Math.round(seconds);
  if (s === 0) return 'due now';
  return s > 0 ? `in ${span(s)}` : `${span(-s)} ago`;
}
