// Writes a running message's status file, coalescing bursts: only the latest text is written.
export class LatestWriter {
  private pending: { text: string | null } | null = null;
  private running: Promise<void> = Promise.resolve();
  private busy = false;
  /** Whether the write of the latest text failed: nothing newer went through after it. */
  private failed = false;

  constructor(private readonly write: (text: string | null) => Promise<void>) {}

  set(text: string | null): void {
    this.pending = { text };
    if (!this.busy) this.running = this.drain();
  }

  /** Resolves when everything set so far has been written, or its write has failed (`lost`). */
  flush(): Promise<void> {
    return this.running;
  }

  /** Once flushed: the latest text is not on disk (its write failed; a full disk, say). */
  get lost(): boolean {
    return this.failed;
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.pending) {
        const { text } = this.pending;
        this.pending = null;
        await this.write(text).then(
          () => (this.failed = false),
          () => (this.failed = true),
        );
      }
    } finally {
      this.busy = false;
    }
  }
}
