// Test harness: a real etcd (Debian's etcd-server) on free loopback ports with a temporary data dir, stopped by its pid; restartable on the same ports and data.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitFor } from './rq-root.js';

export const ETCD_BIN = '/usr/bin/etcd';

export class EtcdProc {
  private child: ChildProcess | null = null;

  private constructor(
    readonly dir: string,
    readonly clientPort: number,
    readonly peerPort: number,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.clientPort}`;
  }

  /**
   * Tests keep etcd's data on tmpfs where there is one: etcd fsyncs its log at every write, and on a
   * disk the whole suite keeps busy a lease keepalive can wait past a test's 2 s TTL, which drops a
   * host that is up. Benchmarks keep it on disk (`onDisk`), where a real etcd pays for its fsyncs.
   */
  static async start(opts: { onDisk?: boolean } = {}): Promise<EtcdProc> {
    const base = !opts.onDisk && fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
    const dir = fs.mkdtempSync(path.join(base, 'rq-etcd-'));
    const e = new EtcdProc(dir, await freePort(), await freePort());
    await e.run();
    return e;
  }

  /** Starts etcd (again) on the same ports and data dir, and waits until it reports healthy. */
  async run(): Promise<void> {
    const peer = `http://127.0.0.1:${this.peerPort}`;
    const log = fs.openSync(path.join(this.dir, 'etcd.log'), 'a');
    // A short election timeout: a restarted single member elects itself (and its leases resume) in well under a second.
    this.child = spawn(
      ETCD_BIN,
      [
        '--name=rq-test',
        `--data-dir=${path.join(this.dir, 'data')}`,
        `--listen-client-urls=${this.url}`,
        `--advertise-client-urls=${this.url}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=rq-test=${peer}`,
        '--heartbeat-interval=50',
        '--election-timeout=500',
        '--logger=zap',
        '--log-outputs=stderr',
      ],
      { stdio: ['ignore', log, log] },
    );
    fs.closeSync(log);
    const child = this.child;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`etcd exited ${child.exitCode}: ${fs.readFileSync(path.join(this.dir, 'etcd.log'), 'utf8').slice(-2000)}`);
        const r = await fetch(`${this.url}/health`);
        return r.ok && ((await r.json()) as { health?: string }).health === 'true';
      },
      'etcd to report healthy',
      20_000,
    );
  }

  /** TERM to the etcd this harness started, by its pid; resolves once it has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    process.kill(child.pid!, 'SIGTERM');
    await gone;
  }

  async cleanup(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
