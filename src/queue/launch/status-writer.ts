// Writes a running message's status file, coalescing bursts: only the latest text is written.
export class LatestWriter {
  private pending: { text: string | null } | null = null;
  private running: Promise<void> = Promise.resolve();
  private busy = false;

  constructor(private readonly write: (text: string | null) => Promise<void>) {}

  set(text: string | null): void {
    this.pending = { text };
    if (!this.busy) this.running = this.drain();
  }

  /** Resolves when everything set so far is on disk. */
  flush(): Promise<void> {
    return this.running;
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.pending) {
        const { text } = this.pending;
        this.pending = null;
        await this.write(text).catch(() => undefined);
      }
    } finally {
      this.busy = false;
    }
  }
}
