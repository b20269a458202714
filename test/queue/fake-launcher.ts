// A launcher that starts no process: each "script" is driven by the test (lines on fd 3, replies on fd 4, exit).
import { PassThrough } from 'node:stream';
import { streamFromScript } from '../../src/queue/launch/from-script.js';
import type { ExitInfo, LaunchRequest, LaunchedChild, Launcher } from '../../src/queue/launch/script-runner.js';

export class FakeScript {
  readonly fromScript = new PassThrough();
  readonly toScript = new PassThrough();
  /** Signals the queue sent to the script's group, in order. */
  readonly signals: NodeJS.Signals[] = [];
  private resolveExit!: (e: ExitInfo) => void;
  readonly exited = new Promise<ExitInfo>((r) => (this.resolveExit = r));
  private replyText = '';

  constructor(
    readonly request: LaunchRequest,
    readonly pid: number,
  ) {
    this.toScript.on('data', (c: Buffer) => (this.replyText += c.toString()));
  }

  get env(): NodeJS.ProcessEnv {
    return this.request.env.object();
  }

  /** Writes lines on the script's fd 3. */
  say(...lines: string[]): void {
    for (const l of lines) this.fromScript.write(`${l}\n`);
  }

  /** Exits (fd 3 closes first, as a real exit does). */
  exit(code: number | null, signal: NodeJS.Signals | null = null): void {
    this.fromScript.end();
    this.resolveExit({ code, signal });
  }

  /** Resolves with the reply lines written to fd 4 once there are `n` of them. */
  async replies(n: number): Promise<string[]> {
    for (;;) {
      const lines = this.replyText.split('\n').filter(Boolean);
      if (lines.length >= n) return lines;
      await new Promise((r) => this.toScript.once('data', r));
    }
  }

  child(): LaunchedChild {
    return {
      pid: this.pid,
      fromScript: streamFromScript(this.fromScript),
      toScript: this.toScript,
      exited: this.exited,
      kill: (signal) => {
        this.signals.push(signal);
        this.onSignal?.(signal);
      },
    };
  }

  /** What the script does on a signal; by default it dies of it. */
  onSignal: ((s: NodeJS.Signals) => void) | null = (s) => this.exit(null, s);
}

export class FakeLauncher {
  readonly started: FakeScript[] = [];
  private nextPid = 4_000_000;
  private waiters: Array<() => void> = [];

  /** What the next launches do instead of starting a script (return a failedLaunch, or throw), in order. */
  readonly failures: Array<(r: LaunchRequest) => LaunchedChild> = [];

  readonly launch: Launcher = (r) => {
    const fail = this.failures.shift();
    if (fail) return fail(r);
    const s = new FakeScript(r, this.nextPid++);
    this.started.push(s);
    this.waiters.splice(0).forEach((w) => w());
    return s.child();
  };

  /** The `n`th script started (0-based), once it has been. */
  async nth(n: number): Promise<FakeScript> {
    while (this.started.length <= n) await new Promise<void>((r) => this.waiters.push(r));
    return this.started[n];
  }
}
