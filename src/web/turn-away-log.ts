// One warn line per window for the connections the web turned away (refused or evicted), with counts: a flood of connections must not become a flood of log lines.
import type { Logger } from 'pino';

export type TurnAway = 'refused' | 'evicted';

export interface TurnAwayLog {
  /** One connection turned away; `fields` describe the latest (its peer, the cap it met). */
  note(kind: TurnAway, fields: Record<string, unknown>): void;
  /** Logs what is still unlogged and stops the timer (shutdown, tests). */
  flush(): void;
}

/**
 * The first turn-away after a quiet window is logged at once; the rest of the window is counted
 * and logged together when it ends, by a timer, so the last burst of a flood is not left unsaid
 * until the next one (the timer is unref'd: it never holds the process up).
 */
export function turnAwayLog(log: Logger, windowMs: number, now: () => number = Date.now): TurnAwayLog {
  const counts: Record<TurnAway, number> = { refused: 0, evicted: 0 };
  let latest: Record<string, unknown> = {};
  let loggedAt = -Infinity;
  let timer: NodeJS.Timeout | null = null;

  const write = () => {
    if (counts.refused === 0 && counts.evicted === 0) return;
    log.warn({ ...latest, refused: counts.refused, evicted: counts.evicted, window_s: windowMs / 1000 }, 'web connections turned away');
    counts.refused = 0;
    counts.evicted = 0;
    loggedAt = now();
  };
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    write();
  };

  return {
    note(kind, fields) {
      counts[kind]++;
      latest = fields;
      if (now() - loggedAt >= windowMs) return flush();
      if (timer) return;
      timer = setTimeout(flush, Math.max(0, loggedAt + windowMs - now()));
      timer.unref();
    },
    flush,
  };
}
