// DependencyOutbox's test harness: a box over a temp spool whose dependents' queues answer as the test says, and the moves and waits its tests share.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, expect, vi } from 'vitest';
import { silentLogger } from '../../../src/log.js';
import type { State } from '../../../src/message/states.js';
import { Outbox, appendDependent } from '../../../src/spool/dependency-files.js';
import { DependencyOutbox, type Notified } from '../../../src/queue/dependencies/dependency-outbox.js';
import { QueueEvents } from '../../../src/queue/status/queue-events.js';
import { type TempSpool, tempSpool } from '../../helpers/temp-spool.js';

export const ID = (n: number) => `20261121.1643.46.613.${n}`;
export type Notice = { dependency: string; state: string; outcome?: string };

/** The current test's box and what it saw; made afresh before each test of the file that calls useOutbox. */
export const o = {} as {
  t: TempSpool;
  events: QueueEvents;
  box: DependencyOutbox;
  where: Map<string, { state: State; dir: string }>;
  notices: [string, Notice][];
  notify: (dependent: string, p: Notice) => Promise<Notified>;
  queues: Set<string>;
  outbox: Outbox;
};

export function useOutbox(): void {
  beforeEach(async () => {
    o.t = await tempSpool('dep');
    o.events = new QueueEvents();
    o.where = new Map();
    o.notices = [];
    o.queues = new Set(['a', 'b']);
    o.notify = async () => 'resolved';
    o.box = new DependencyOutbox({
      spool: o.t.spool,
      events: o.events,
      log: silentLogger(),
      locate: async (id) => o.where.get(id) ?? null,
      notify: (dependent, p) => {
        o.notices.push([dependent, p]);
        return o.notify(dependent, p);
      },
      queueExists: (q) => o.queues.has(q),
    });
    o.outbox = new Outbox(path.join(o.t.spool.paths.dir, '.outbox'), o.t.spool.dirSync);
  });
  afterEach(async () => {
    o.box.close();
    vi.useRealTimers();
    await o.t.cleanup();
  });
}

/** Message `n` in `state`, on disk, with `dependents` registered. */
export async function message(n: number, state: State, dependents: string[] = [], fields: Record<string, unknown> = {}): Promise<string> {
  const dir = o.t.spool.msgDir(state, ID(n));
  await fs.mkdir(dir, { recursive: true });
  await o.t.spool.writeMessage(state, ID(n), { msg_id: ID(n), ...fields } as never);
  for (const d of dependents) await appendDependent(dir, d, new Date(), o.t.spool.dirSync);
  o.where.set(ID(n), { state, dir });
  return dir;
}

/** The finishing rename of message `n`, then the spool's event for it. */
export async function move(n: number, from: State, to: State): Promise<void> {
  const dir = o.t.spool.msgDir(to, ID(n));
  await fs.mkdir(path.dirname(dir), { recursive: true });
  await fs.rename(o.t.spool.msgDir(from, ID(n)), dir);
  o.where.set(ID(n), { state: to, dir });
  o.events.emit('moved', { id: ID(n), from, to, actor: 'queue' });
}

export const settle = async () => {
  for (let i = 0; i < 30; i++) await new Promise<void>((r) => setImmediate(r));
};

/** Turns the event loop (setImmediate: the tests fake setTimeout) until `cond` holds, 5 s at most. */
export async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  const end = performance.now() + 5000;
  while (!(await cond()) && performance.now() < end) await new Promise<void>((r) => setImmediate(r));
  expect(await cond()).toBe(true);
}
