// When a broken etcd stream counts as etcd's loss: only once it has stayed unanswered for the failover time, since a cluster member's failure is no outage.

/**
 * A stream's failures, reported only once it has gone unanswered for the failover time: when one
 * member of a cluster fails, the client opens the stream again on another (and if it was the leader,
 * the others elect one, which keep-alives wait for); that is no outage, and is not said as one.
 */
export class Failover {
  private timer: NodeJS.Timeout | null = null;
  private why = '';
  private said = false;

  constructor(
    private readonly graceMs: number,
    private readonly report: (why: string) => void,
  ) {}

  /** Failing since `since` (epoch ms): said once that is the failover time ago, and at once from then on until answered. */
  failing(why: string, since: number): void {
    this.why = why;
    if (this.said) return this.report(why);
    this.timer ??= setTimeout(
      () => {
        this.timer = null;
        this.said = true;
        this.report(this.why);
      },
      Math.max(0, since + this.graceMs - Date.now()),
    );
  }

  /** Answered: a failure not yet said is dropped. */
  answered(): void {
    this.close();
    this.said = false;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
