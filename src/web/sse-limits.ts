// The web's open Server-Sent Events streams: counted in total and per followed message, so a new one over a bound is refused before it starts, and ended together at shutdown.
import { RqError } from '../errors.js';

export interface SseSlot {
  /** The stream is over; safe to call more than once. */
  release(): void;
}

export class SseLimits {
  private total = 0;
  private readonly perMessage = new Map<string, number>();
  private readonly enders = new Set<() => void>();

  constructor(
    private readonly maxStreams: number,
    private readonly maxPerMessage: number,
  ) {}

  open(): number {
    return this.total;
  }

  /**
   * A slot for one stream (of message `msg`, `<q>/<id>`, for a log tail), or the refusal to answer
   * with: 503 and Retry-After. `end` ends the stream with a last event; endAll calls it.
   */
  take(msg: string | null, end: () => void): SseSlot {
    if (this.total >= this.maxStreams) throw RqError.of('RQ_ERR_TOO_MANY_SSE', this.total);
    const mine = msg === null ? 0 : (this.perMessage.get(msg) ?? 0);
    if (msg !== null && mine >= this.maxPerMessage) throw RqError.of('RQ_ERR_TOO_MANY_TAILS', mine, msg);
    this.total++;
    if (msg !== null) this.perMessage.set(msg, mine + 1);
    let held = true;
    this.enders.add(end);
    return {
      release: () => {
        if (!held) return;
        held = false;
        this.enders.delete(end);
        this.total--;
        if (msg === null) return;
        const n = (this.perMessage.get(msg) ?? 1) - 1;
        if (n > 0) this.perMessage.set(msg, n);
        else this.perMessage.delete(msg);
      },
    };
  }

  /** Shutdown: every stream gets its last event now, rather than holding the web open until its grace runs out. */
  endAll(): void {
    for (const end of [...this.enders]) end();
  }
}
