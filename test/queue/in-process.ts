// A Queue in this process: temp root, fake launcher, a clock the test moves; no daemon, no script processes.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { normaliseQueueConfig } from '../../src/config/queue-config.js';
import type { Message } from '../../src/message/message.js';
import type { State } from '../../src/message/states.js';
import { QueueClient } from '../../src/ipc/queue-client.js';
import { handleRequest } from '../../src/queue/commands/commands.js';
import { Queue } from '../../src/queue/queue.js';
import type { QueueEventMap } from '../../src/queue/status/queue-events.js';
import type { SpoolFs } from '../../src/spool/spool-fs.js';
import { FakeLauncher } from './fake-launcher.js';

export interface InProcess {
  root: string;
  queue: Queue;
  launcher: FakeLauncher;
  clock: { ms: number };
  /** Peer calls the queue made (dup to other queues, webhooks). */
  peerCalls: Array<{ queue: string; command: string; arg: unknown }>;
  send(fields?: Record<string, unknown>): Promise<Message>;
  /** A socket command's reply, parsed, as a client would read it. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  cmd(command: string, arg?: Record<string, unknown>): Promise<any>;
  /** Resolves with the next event of `name` that `match` accepts. */
  next<K extends keyof QueueEventMap>(name: K, match?: (...a: QueueEventMap[K]) => boolean): Promise<QueueEventMap[K][0]>;
  state(id: string): Promise<State | undefined>;
  /** Runs one message to its end: its script says `line` and exits with `code`; resolves with the message once it has finished. */
  runToEnd(fields: Record<string, unknown>, line: string, code: number): Promise<Message>;
  /** Writes the pause file and has the queue read it: what is sent or requeued after waits in the que. */
  pause(): Promise<void>;
  /** Stops the queue and keeps its root (another queue may open it: `inProcessQueue(config, { root })`). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export interface InProcessOptions {
  peer?: (q: string, c: string, a: unknown) => Promise<unknown>;
  root?: string;
  clockMs?: number;
  tmpDir?: string;
  /** The spool's disk calls, given the root (a recording SpoolFs, say). */
  fs?: (root: string) => SpoolFs;
  /** Starts with the pause file in place: messages wait in the que until it goes. */
  paused?: boolean;
  /** The queue's logger (silent unless given: `capturedLog()` to read what it says). */
  log?: Logger;
}

export async function inProcessQueue(config: Record<string, unknown> = {}, opts: InProcessOptions = {}): Promise<InProcess> {
  const root = opts.root ?? (await fs.mkdtemp(path.join(opts.tmpDir ?? os.tmpdir(), 'rq-inproc-')));
  if (!opts.root) {
    await fs.mkdir(path.join(root, 'queues', 'q'), { recursive: true });
    await fs.mkdir(path.join(root, 'config'), { recursive: true });
    // Never executed (the launcher is fake), but it must resolve to an executable file.
    await fs.mkdir(path.join(root, 'scripts'));
    await fs.writeFile(path.join(root, 'scripts', 'q-run'), '#!/bin/sh\n', { mode: 0o755 });
  }
  if (opts.paused) await fs.writeFile(path.join(root, 'config', 'q.pause'), '');
  const launcher = new FakeLauncher();
  const clock = { ms: opts.clockMs ?? Date.UTC(2026, 10, 25, 12, 0, 0) };
  const peerCalls: InProcess['peerCalls'] = [];
  const queue = new Queue({
    root,
    config: normaliseQueueConfig({ name: 'q', script: 'scripts/q-run', num_workers: 1, ...config }),
    host: { host: '127.0.0.1', port: 3333, root: '/' },
    log: opts.log ?? pino({ level: 'silent' }),
    peer: (q) =>
      new QueueClient(async (command, arg) => {
        peerCalls.push({ queue: q, command, arg });
        return opts.peer ? opts.peer(q, command, arg) : ['ok', `http://127.0.0.1:3333/q/${q}/x`];
      }),
    launch: launcher.launch,
    now: () => clock.ms,
    baseEnv: {},
    killGraceMs: 50,
    fs: opts.fs?.(root),
  });
  await queue.start();
  const next: InProcess['next'] = (name, match) =>
    new Promise((resolve) => {
      const on = (...a: QueueEventMap[typeof name]) => {
        if (match && !match(...a)) return;
        queue.events.off(name, on as never);
        resolve(a[0]);
      };
      queue.events.on(name, on as never);
    });
  return {
    root,
    queue,
    launcher,
    clock,
    peerCalls,
    send: (fields = {}) => queue.ops.create({ dest: 'q', ...fields } as never, true),
    cmd: async (command, arg = {}) => JSON.parse(await handleRequest(queue, `${command} ${JSON.stringify(arg)}`, pino({ level: 'silent' }))),
    next,
    state: async (id) => (await queue.ops.locate(id))?.state,
    runToEnd: async (fields, line, code) => {
      const n = launcher.started.length;
      const m = await queue.ops.create({ dest: 'q', ...fields } as never, true);
      const s = await launcher.nth(n);
      const end = next('finished', (e) => e.msg.msg_id === m.msg_id && e.outcome.state !== 'que');
      s.say(line);
      s.exit(code);
      await end;
      return m;
    },
    pause: async () => {
      await fs.writeFile(path.join(root, 'config', 'q.pause'), '');
      if (queue.status() !== 'PAUSE') throw new Error(`queue status ${queue.status()} after writing its pause file`);
    },
    stop: () => queue.stop(),
    close: async () => {
      await queue.stop();
      await fs.rm(root, { recursive: true, force: true });
    },
  };
}
