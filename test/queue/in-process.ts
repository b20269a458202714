// A Queue in this process: temp root, fake launcher, a clock the test moves; no daemon, no script processes.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { normaliseQueueConfig } from '../../src/config/queue-config.js';
import type { Message } from '../../src/message/message.js';
import type { State } from '../../src/message/states.js';
import { QueueClient } from '../../src/ipc/queue-client.js';
import { Queue } from '../../src/queue/queue.js';
import type { QueueEventMap } from '../../src/queue/queue-events.js';
import { FakeLauncher } from './fake-launcher.js';

export interface InProcess {
  root: string;
  queue: Queue;
  launcher: FakeLauncher;
  clock: { ms: number };
  /** Peer calls the queue made (dup to other queues, webhooks). */
  peerCalls: Array<{ queue: string; command: string; arg: unknown }>;
  send(fields?: Record<string, unknown>): Promise<Message>;
  /** Resolves with the next event of `name` that `match` accepts. */
  next<K extends keyof QueueEventMap>(name: K, match?: (...a: QueueEventMap[K]) => boolean): Promise<QueueEventMap[K][0]>;
  state(id: string): Promise<State | undefined>;
  /** Stops the queue and keeps its root (another queue may open it: `inProcessQueue(config, { root })`). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

export async function inProcessQueue(config: Record<string, unknown> = {}, opts: { peer?: (q: string, c: string, a: unknown) => Promise<unknown>; root?: string; clockMs?: number; tmpDir?: string } = {}): Promise<InProcess> {
  const root = opts.root ?? (await fs.mkdtemp(path.join(opts.tmpDir ?? os.tmpdir(), 'rq-inproc-')));
  if (!opts.root) {
    await fs.mkdir(path.join(root, 'queues', 'q'), { recursive: true });
    await fs.mkdir(path.join(root, 'config'), { recursive: true });
    // Never executed (the launcher is fake), but it must resolve to an executable file.
    await fs.mkdir(path.join(root, 'scripts'));
    await fs.writeFile(path.join(root, 'scripts', 'q-run'), '#!/bin/sh\n', { mode: 0o755 });
  }
  const launcher = new FakeLauncher();
  const clock = { ms: opts.clockMs ?? Date.UTC(2026, 10, 25, 12, 0, 0) };
  const peerCalls: InProcess['peerCalls'] = [];
  const queue = new Queue({
    root,
    config: normaliseQueueConfig({ name: 'q', script: 'scripts/q-run', num_workers: 1, ...config }),
    host: { host: '127.0.0.1', port: 3333, root: '/' },
    log: pino({ level: 'silent' }),
    peer: (q) =>
      new QueueClient(async (command, arg) => {
        peerCalls.push({ queue: q, command, arg });
        return opts.peer ? opts.peer(q, command, arg) : ['ok', `http://127.0.0.1:3333/q/${q}/x`];
      }),
    launch: launcher.launch,
    now: () => clock.ms,
    baseEnv: {},
    killGraceMs: 50,
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
    next,
    state: async (id) => (await queue.ops.locate(id))?.state,
    stop: () => queue.stop(),
    close: async () => {
      await queue.stop();
      await fs.rm(root, { recursive: true, force: true });
    },
  };
}
