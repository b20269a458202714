// Paces the progress texts of running messages for the live feed: the first at once, then at most one per interval, always ending on the latest.

interface Paced {
  /** Epoch ms of the last text sent. */
  at: number;
  text: string;
  timer: NodeJS.Timeout | null;
}

/**
 * A script may write thousands of status lines a second; every browser following the queue need not
 * see each one. The text a page shows is never older than one interval, and nothing waits on a reader.
 */
export class ProgressPacer {
  private readonly paced = new Map<string, Paced>();

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number,
    private readonly send: (id: string, text: string) => void,
  ) {}

  report(id: string, text: string): void {
    const t = this.now();
    const p = this.paced.get(id);
    if (!p) {
      this.paced.set(id, { at: t, text, timer: null });
      this.send(id, text);
      return;
    }
    p.text = text;
    if (p.timer) return;
    const wait = p.at + this.intervalMs - t;
    if (wait <= 0) {
      p.at = t;
      this.send(id, text);
      return;
    }
    p.timer = setTimeout(() => {
      p.timer = null;
      p.at = this.now();
      this.send(id, p.text);
    }, wait);
  }

  /** The run is over: a text still waiting is dropped (the run's `finished` event carries its last status). */
  forget(id: string): void {
    const p = this.paced.get(id);
    if (p?.timer) clearTimeout(p.timer);
    this.paced.delete(id);
  }

  close(): void {
    for (const id of [...this.paced.keys()]) this.forget(id);
  }
}
