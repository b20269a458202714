// Multi-host harness: rq roots installed with the built-in queues, each with a real rq-mgr (web, timers, queues) on its own loopback port.
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { queuePaths } from '../../src/config/paths.js';
import { MgrProc, install } from '../helpers/mgr-proc.js';
import { type QueueDef, addQueue, freePort, waitFor } from '../helpers/rq-root.js';

export const RECORD_SH = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'record.sh');

export interface HostOptions {
  /** Extra keys merged into config/config.json (e.g. relative_root), or made from the host's port (a fleet's advertise URL). */
  config?: Record<string, unknown> | ((port: number) => Record<string, unknown>);
  queues?: Record<string, QueueDef>;
  /** Runs in the root after install, before rq-mgr starts. */
  setup?: (root: string) => Promise<void>;
}

export class Host {
  mgr: MgrProc | null = null;
  private constructor(
    readonly root: string,
    readonly port: number,
    readonly prefix: string,
  ) {}

  static async start(opts: HostOptions = {}): Promise<Host> {
    const root = await fsp.mkdtemp(path.join(os.tmpdir(), 'rq-host-'));
    const port = await freePort();
    await install(root, port);
    const cfgFile = path.join(root, 'config', 'config.json');
    const extra = typeof opts.config === 'function' ? opts.config(port) : opts.config;
    const config = { ...JSON.parse(await fsp.readFile(cfgFile, 'utf8')), ...extra };
    await fsp.writeFile(cfgFile, `${JSON.stringify(config)}\n`);
    for (const [name, def] of Object.entries(opts.queues ?? {})) await addQueue(root, name, def);
    await opts.setup?.(root);
    const prefix = typeof config.relative_root === 'string' ? config.relative_root.replace(/\/+$/, '') : '';
    const h = new Host(root, port, prefix);
    await h.up();
    return h;
  }

  /** http://127.0.0.1:<port><relative_root>, no trailing slash. */
  get base(): string {
    return `http://127.0.0.1:${this.port}${this.prefix}`;
  }

  url(queue: string): string {
    return `${this.base}/q/${queue}`;
  }

  /** The full id this host gives a message (config host is 127.0.0.1). */
  fullId(queue: string, id: string): string {
    return `${this.url(queue)}/${id}`;
  }

  async up(): Promise<void> {
    this.mgr = await MgrProc.start(this.root);
    try {
      await waitFor(async () => (await fetch(`${this.base}/healthz`)).status === 200, 'web process healthy', 20_000, 100);
      for (const q of ['relay', 'webhook', 'cleaner', 'rq_router', ...(await fsp.readdir(path.join(this.root, 'queues')))]) {
        if (!q.startsWith('.') && fs.existsSync(queuePaths(this.root, q).configFile)) await this.mgr.waitQueueUp(q, 10_000);
      }
    } catch (err) {
      const log = await fsp.readFile(path.join(this.root, 'log', 'mgr-test.log'), 'utf8').catch(() => '');
      throw new Error(`${(err as Error).message}\n--- rq-mgr log ---\n${log.slice(-3000)}`, { cause: err });
    }
  }

  async down(): Promise<void> {
    await this.mgr?.stop();
    this.mgr = null;
  }

  async stop(): Promise<void> {
    await this.down();
    await fsp.rm(this.root, { recursive: true, force: true });
  }

  // Queue replies are JSON of many shapes; tests index into them freely.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  q(queue: string, command: string, arg: unknown = {}): Promise<any> {
    if (!this.mgr) throw new Error('host is down');
    return this.mgr.q(queue, command, arg);
  }

  /** Creates a committed message over the queue socket; returns its short id. */
  async send(queue: string, fields: Record<string, unknown>): Promise<string> {
    const r = await this.q(queue, 'create_message', fields);
    if (r[0] !== 'ok') throw new Error(`create_message in ${queue}: ${JSON.stringify(r)}`);
    return String(r[1]).split('/').pop()!;
  }

  async state(queue: string, id: string): Promise<string> {
    const r = await this.q(queue, 'get_message_state', { msg_id: id });
    return r[0] === 'ok' ? r[1] : `missing:${r[1]}`;
  }

  /** Waits for one of `states` and returns get_message's message. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async waitState(queue: string, id: string, states: string[], timeoutMs = 20_000): Promise<any> {
    let last = '';
    try {
      await waitFor(async () => states.includes((last = await this.state(queue, id))), `${queue}/${id} to reach ${states.join('|')}`, timeoutMs, 50);
    } catch (err) {
      throw new Error(`${(err as Error).message} (last seen: ${last})`, { cause: err });
    }
    return (await this.q(queue, 'get_message', { msg_id: id }))[1];
  }

  /** Every message of a queue in done/relayed/err/que/run, as get_message returns them. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async messages(queue: string): Promise<any[]> {
    // In the order messages move (que, run, then the finished states): one moving on between two
    // listings is met again in a later one, never missed; the set drops the second sighting.
    const ids = new Set<string>();
    for (const [id] of await this.q(queue, 'messages', { state: 'que', limit: 100_000 })) ids.add(id);
    for (const [id] of await this.q(queue, 'messages', { state: 'run', limit: 100_000 })) ids.add(id);
    for (const state of ['done', 'relayed', 'err'] as const) for (const id of await this.q(queue, 'messages', { state, limit: 100_000 })) ids.add(id);
    const out = [];
    for (const id of ids) out.push((await this.q(queue, 'get_message', { msg_id: id }))[1]);
    return out;
  }

  /** The job/stdio.log of a message (wherever it is now). */
  /** A message's stdio.log, read where the message is: one that moves between the answer and the read (a resend starting) is asked for again. */
  async stdio(queue: string, id: string): Promise<string> {
    for (let tries = 1; ; tries++) {
      const m = (await this.q(queue, 'get_message', { msg_id: id }))[1];
      try {
        return await fsp.readFile(path.join(this.root, m.path, 'job', 'stdio.log'), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || tries >= 10) throw err;
      }
    }
  }
}

/** A file of `mb` MiB of random-looking bytes, written 1 MiB at a time (never whole in memory); returns its md5. */
export async function bigFile(file: string, mb: number): Promise<string> {
  const seed = crypto.randomBytes(1 << 20);
  const hash = crypto.createHash('md5');
  const fh = await fsp.open(file, 'w');
  try {
    for (let i = 0; i < mb; i++) {
      // Each MiB differs from the others, so a misplaced chunk shows in the md5.
      seed.writeUInt32LE(i, (i * 4096) % (seed.length - 4));
      hash.update(seed);
      await fh.write(seed);
    }
  } finally {
    await fh.close();
  }
  return hash.digest('hex');
}

export async function md5File(file: string): Promise<string> {
  const hash = crypto.createHash('md5');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
