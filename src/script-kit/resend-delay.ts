// Back-off of the built-in scripts' soft failures: `resend <count²·unit>` seconds, capped, scaled for tests.

/** The longest wait between two attempts: past this, waiting longer only delays the operator's view. */
export const MAX_RESEND_DELAY_S = 3600;

/**
 * RQ_RELAY_BACKOFF_SCALE multiplies every delay (default 1; e.g. 0.05 in tests so a retry
 * series takes seconds instead of hours). Anything that is not a number >= 0 means 1.
 */
export function backoffScale(env: NodeJS.ProcessEnv): number {
  const raw = env.RQ_RELAY_BACKOFF_SCALE;
  if (raw === undefined || raw.trim() === '') return 1;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : 1;
}

/** Whole seconds to wait after the `count`-th attempt failed: min(count²·unit, cap) · scale. */
export function resendDelay(count: number, unitSeconds: number, scale = 1, capSeconds = MAX_RESEND_DELAY_S): number {
  const c = Number.isFinite(count) && count > 0 ? count : 0;
  return Math.round(Math.min(c * c * unitSeconds, capSeconds) * scale);
}

/** The `resend` line's text: `<delay>-<reason>`, the reason on one line and short enough to read. */
export function resendText(delay: number, reason: string): string {
  const oneLine = reason.replace(/\s+/g, ' ').trim();
  return `${delay}-${oneLine.length > 300 ? `${oneLine.slice(0, 297)}...` : oneLine}`;
}
