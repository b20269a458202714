// Drift-free timer arithmetic: occurrences at t0 + k·period, and how a changed period moves them.

/** A timer's place in time, all in epoch milliseconds. */
export interface Schedule {
  /** The anchor: every occurrence is t0 + k·periodMs. */
  t0: number;
  periodMs: number;
  /** The next occurrence not yet fired. */
  next: number;
  /** The occurrence fired last (null until the first fire). */
  lastFire: number | null;
}

/** A timer seen for the first time fires once right away, so its anchor is now. */
export function newSchedule(now: number, periodMs: number): Schedule {
  return { t0: now, periodMs, next: now, lastFire: null };
}

/**
 * The latest occurrence at or before `now`. After a stall (suspended process, busy machine)
 * several may have passed; only the latest is fired, so a stall never produces a burst.
 */
export function occurrenceAt(s: Schedule, now: number): number {
  if (now < s.t0) return s.t0;
  return s.t0 + Math.floor((now - s.t0) / s.periodMs) * s.periodMs;
}

/**
 * The schedule after firing `occurrence` at `now`: the next occurrence is computed from the
 * anchor, not from `now`, so lateness of one fire never shifts the later ones.
 */
export function afterFire(s: Schedule, occurrence: number, now: number): Schedule {
  const from = Math.max(occurrence, now);
  const next = s.t0 + (Math.floor((from - s.t0) / s.periodMs) + 1) * s.periodMs;
  return { ...s, next, lastFire: occurrence };
}

/**
 * A definition changed. With the same period nothing moves (no double or extra fire). With a new
 * period the next fire is one new period after the last fire, or now when that has already passed,
 * and the anchor moves there so later fires keep the new rhythm.
 */
export function withPeriod(s: Schedule, periodMs: number, now: number): Schedule {
  if (periodMs === s.periodMs) return s;
  const base = s.lastFire ?? now;
  const next = Math.max(base + periodMs, now);
  return { t0: next, periodMs, next, lastFire: s.lastFire };
}

/** A timer that was suspended (invalid file) resumes at its first occurrence from now: what passed meanwhile is not sent. */
export function resumeAt(s: Schedule, now: number): Schedule {
  if (s.next >= now) return s;
  const next = s.t0 + Math.ceil((now - s.t0) / s.periodMs) * s.periodMs;
  return { ...s, next };
}
