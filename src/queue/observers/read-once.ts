// A view of the spool read from disk once, at its first need, and kept by the queue's events after: the changes heard while it is read are applied over what the read found.

/** A change to the view; an asynchronous one is awaited before the next is applied. */
export type Change<T> = ((view: T) => void) | ((view: T) => Promise<void>);

export class ReadOnce<T> {
  private view: T | null = null;
  private reading: Promise<T> | null = null;
  /** Changes heard while the read is under way: it may have listed or read their messages before they changed. */
  private heard: Change<T>[] = [];

  constructor(private readonly read: () => Promise<T>) {}

  /** The view, or null until a read has finished. */
  get current(): T | null {
    return this.view;
  }

  get underWay(): boolean {
    return this.reading !== null;
  }

  /**
   * Applies `change`: at once to a view already read; after the read under way, in the order heard; not at
   * all before any read has begun, since that read finds the disk as the change left it.
   */
  apply(change: Change<T>): void {
    if (this.view !== null) void change(this.view);
    else if (this.reading !== null) this.heard.push(change);
  }

  /** The view, read now if it has not been; concurrent callers share one read. A failed read is thrown to each, and the next call reads again. */
  get(): Promise<T> {
    if (this.view !== null) return Promise.resolve(this.view);
    this.reading ??= this.readAndReplay().then(
      (view) => {
        this.reading = null;
        return view;
      },
      (err: unknown) => {
        // In the same turn as `reading` is let go, so no change can be held in between: what it heard is
        // older than the next read of the disk, and replayed over it would undo what came since.
        this.reading = null;
        this.heard = [];
        throw err;
      },
    );
    return this.reading;
  }

  private async readAndReplay(): Promise<T> {
    const view = await this.read();
    // By index, not a copy: a change heard while an earlier one is awaited is applied after it, in turn.
    for (let i = 0; i < this.heard.length; i++) await this.heard[i](view);
    this.heard = [];
    this.view = view;
    return view;
  }
}
