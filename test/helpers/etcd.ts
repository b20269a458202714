// Test harness: real etcd (Debian's etcd-server) on free loopback ports with temporary data dirs, stopped by pid: one member (over TLS if asked), restartable on the same ports and data, or a cluster of three.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { EtcdStore } from '../../src/fleet/etcd-client.js';
import { freePort, waitFor } from './rq-root.js';

export const ETCD_BIN = '/usr/bin/etcd';

/**
 * A member serving its clients over TLS: its certificate and key, and with `clientCa` a client
 * certificate signed by that CA required of every client (--client-cert-auth; etcd asks a client for
 * a certificate whenever it is given a --trusted-ca-file).
 */
export interface EtcdTls {
  cert: string;
  key: string;
  clientCa?: string;
}

/** How a member finds its cluster: every member's name and peer URL, and the token that tells this cluster from another. */
interface ClusterSpec {
  initialCluster: string;
  token: string;
}

/**
 * Tests keep etcd's data on tmpfs where there is one: etcd fsyncs its log at every write, and on a
 * disk the whole suite keeps busy a lease keepalive can wait past a test's 2 s TTL, which drops a
 * host that is up. Benchmarks keep it on disk (`onDisk`), where a real etcd pays for its fsyncs.
 */
function dataBase(onDisk?: boolean): string {
  const base = !onDisk && fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  return fs.mkdtempSync(path.join(base, 'rq-etcd-'));
}

export class EtcdProc {
  private child: ChildProcess | null = null;
  private cluster: ClusterSpec;

  private constructor(
    readonly dir: string,
    readonly name: string,
    readonly clientPort: number,
    readonly peerPort: number,
    readonly tls: EtcdTls | null = null,
    /** Over TLS, where /health is served in plain http (etcd's --listen-metrics-urls), for the harness's own check. */
    private readonly metricsPort = 0,
  ) {
    this.cluster = { initialCluster: `${name}=${this.peerUrl}`, token: 'etcd-cluster' };
  }

  get url(): string {
    return `${this.tls ? 'https' : 'http'}://127.0.0.1:${this.clientPort}`;
  }

  get peerUrl(): string {
    return `http://127.0.0.1:${this.peerPort}`;
  }

  /** One member, its own cluster; see dataBase for where its data is. */
  static async start(opts: { onDisk?: boolean; tls?: EtcdTls } = {}): Promise<EtcdProc> {
    const e = await EtcdProc.make(dataBase(opts.onDisk), 'rq-test', opts.tls);
    await e.run();
    return e;
  }

  /** A member named `name` in `dir` on two free ports, not started. */
  static async make(dir: string, name: string, tls?: EtcdTls): Promise<EtcdProc> {
    return new EtcdProc(dir, name, await freePort(), await freePort(), tls ?? null, tls ? await freePort() : 0);
  }

  /** etcd's flags for TLS to its clients (its peers talk plain http on loopback). */
  private tlsFlags(): string[] {
    const t = this.tls;
    if (!t) return [];
    const flags = [`--cert-file=${t.cert}`, `--key-file=${t.key}`, `--listen-metrics-urls=http://127.0.0.1:${this.metricsPort}`];
    return t.clientCa ? [...flags, `--trusted-ca-file=${t.clientCa}`, '--client-cert-auth'] : flags;
  }

  /** Makes this member one of a cluster (before its first run). */
  joins(cluster: ClusterSpec): void {
    this.cluster = cluster;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts etcd (again) on the same ports and data dir, and waits until it reports healthy (in a cluster: a leader, and a quorum that answers). */
  async run(): Promise<void> {
    const logFile = path.join(this.dir, 'etcd.log');
    const log = fs.openSync(logFile, 'a');
    // Short heartbeats and election timeout: a restarted single member elects itself (and its leases resume) in well under a second,
    // and a cluster that lost its leader elects another as soon.
    // setpriv execs etcd (its pid is etcd's) with a parent-death signal: a test worker killed (a timeout, a mutation run) takes its etcd along.
    this.child = spawn(
      'setpriv',
      [
        '--pdeathsig=KILL',
        '--',
        ETCD_BIN,
        `--name=${this.name}`,
        `--data-dir=${path.join(this.dir, 'data')}`,
        `--listen-client-urls=${this.url}`,
        `--advertise-client-urls=${this.url}`,
        `--listen-peer-urls=${this.peerUrl}`,
        `--initial-advertise-peer-urls=${this.peerUrl}`,
        `--initial-cluster=${this.cluster.initialCluster}`,
        `--initial-cluster-token=${this.cluster.token}`,
        '--initial-cluster-state=new',
        '--heartbeat-interval=50',
        '--election-timeout=500',
        '--logger=zap',
        '--log-outputs=stderr',
        ...this.tlsFlags(),
      ],
      { stdio: ['ignore', log, log] },
    );
    fs.closeSync(log);
    const child = this.child;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`etcd ${this.name} exited ${child.exitCode}: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
        const r = await fetch(`${this.tls ? `http://127.0.0.1:${this.metricsPort}` : this.url}/health`);
        return r.ok && ((await r.json()) as { health?: string }).health === 'true';
      },
      `etcd ${this.name} to report healthy`,
      20_000,
    );
  }

  /**
   * Freezes (SIGSTOP) or thaws (SIGCONT) the running member: connections stay open and nothing is
   * answered. A freeze resolves once every thread of etcd is stopped: the kernel stops them one by one
   * after the signal is sent, and a request sent before the last one stopped could still be answered.
   */
  async freeze(frozen: boolean): Promise<void> {
    const pid = this.child!.pid!;
    process.kill(pid, frozen ? 'SIGSTOP' : 'SIGCONT');
    if (!frozen) return;
    const state = (tid: string) => fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
    await waitFor(() => fs.readdirSync(`/proc/${pid}/task`).every((tid) => 'tT'.includes(state(tid))), `etcd ${this.name}'s threads to stop`);
  }

  /** A signal (TERM: a clean stop; KILL: a crash) to the etcd this harness started, by its pid; resolves once it has exited. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    // A frozen member would hold the signal until thawed.
    process.kill(child.pid!, 'SIGCONT');
    process.kill(child.pid!, signal);
    await gone;
  }

  async cleanup(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** What `POST /v3/maintenance/status` answers (uint64s as strings). */
interface MemberStatus {
  header: { member_id: string };
  leader: string;
}

/** A cluster of `n` members on loopback, started together (a member is healthy only once a majority has elected a leader). */
export class EtcdCluster {
  private constructor(
    readonly dir: string,
    readonly members: EtcdProc[],
  ) {}

  static async start(n = 3): Promise<EtcdCluster> {
    const dir = dataBase();
    const members: EtcdProc[] = [];
    for (let i = 0; i < n; i++) {
      const sub = path.join(dir, `m${i}`);
      fs.mkdirSync(sub);
      members.push(await EtcdProc.make(sub, `rq-test-${i}`));
    }
    const spec = { initialCluster: members.map((m) => `${m.name}=${m.peerUrl}`).join(','), token: path.basename(dir) };
    for (const m of members) m.joins(spec);
    const c = new EtcdCluster(dir, members);
    try {
      await Promise.all(members.map((m) => m.run()));
    } catch (err) {
      await c.cleanup();
      throw err;
    }
    return c;
  }

  /** Every member's client URL, as a host's fleet.etcd lists them. */
  get urls(): string[] {
    return this.members.map((m) => m.url);
  }

  /** Member `i`'s own status: its id and the leader's as it knows them. */
  async status(i: number): Promise<MemberStatus> {
    const r = await fetch(`${this.members[i].url}/v3/maintenance/status`, { method: 'POST', body: '{}' });
    if (!r.ok) throw new Error(`etcd ${this.members[i].name} status: HTTP ${r.status}`);
    return (await r.json()) as MemberStatus;
  }

  /** The index of the member every running member takes for the leader; waits until they agree. */
  async leader(timeoutMs = 10_000): Promise<number> {
    return waitFor(
      async () => {
        const live = this.members.map((m, i) => (m.running ? i : -1)).filter((i) => i >= 0);
        const st = await Promise.all(live.map((i) => this.status(i)));
        const leader = st[0].leader;
        if (leader === '0' || st.some((s) => s.leader !== leader)) return null;
        const at = st.findIndex((s) => s.header.member_id === leader);
        return at >= 0 ? { i: live[at] } : null;
      },
      'the etcd members to agree on a leader',
      timeoutMs,
    ).then((l) => l.i);
  }

  /** Makes member `to` the leader (etcd's leadership transfer, asked of the leader now); resolves once every running member agrees. */
  async moveLeader(to: number): Promise<void> {
    const from = await this.leader();
    if (from === to) return;
    const targetID = (await this.status(to)).header.member_id;
    const r = await fetch(`${this.members[from].url}/v3/maintenance/transfer-leadership`, { method: 'POST', body: JSON.stringify({ targetID }) });
    if (!r.ok) throw new Error(`etcd leadership transfer to ${this.members[to].name}: HTTP ${r.status} ${await r.text()}`);
    await waitFor(async () => (await this.leader()) === to, `${this.members[to].name} to lead`);
  }

  /** The client streams (lease keep-alives and watches) open on member `i` now, from its gRPC counters: started less ended. */
  async streams(i: number): Promise<number> {
    const text = await (await fetch(`${this.members[i].url}/metrics`)).text();
    let open = 0;
    for (const line of text.split('\n')) {
      const m = /^grpc_server_(started|handled)_total\{(.*)\} (\d+)$/.exec(line);
      if (m && /grpc_method="(LeaseKeepAlive|Watch)"/.test(m[2]) && /grpc_service="etcdserverpb\./.test(m[2]))
        open += (m[1] === 'started' ? 1 : -1) * Number(m[3]);
    }
    return open;
  }

  /** TERM to member `i` (a clean stop). */
  stop(i: number): Promise<void> {
    return this.members[i].stop('SIGTERM');
  }

  /** KILL to member `i` (a crash: no goodbye to its peers or clients). */
  kill(i: number): Promise<void> {
    return this.members[i].stop('SIGKILL');
  }

  async cleanup(): Promise<void> {
    for (const m of this.members) await m.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One etcd and a store on it for the tests of a file (or of the describe it is called in): started before them, cleaned up after. */
export function etcdForFile(opts: { failoverMs?: number } = {}): { etcd: EtcdProc; store: EtcdStore } {
  const got = {} as { etcd: EtcdProc; store: EtcdStore };
  beforeAll(async () => {
    got.etcd = await EtcdProc.start();
    got.store = await EtcdStore.open({ endpoints: [got.etcd.url], ...opts });
  }, 60_000);
  afterAll(async () => {
    got.store?.close();
    await got.etcd?.cleanup();
  });
  return got;
}
