// Transitions on a real spool in a temp dir and a real MessageIndex, fresh for each test, with the events it told and its pumps recorded in order.
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { Message } from '../../../src/message/message.js';
import { MessageIndex } from '../../../src/queue/index/message-index.js';
import { QueueEvents } from '../../../src/queue/status/queue-events.js';
import { Transitions } from '../../../src/queue/transitions/transitions.js';
import type { QueueSpool } from '../../../src/spool/queue-spool.js';
import { type TempSpool, tempSpool } from '../../helpers/temp-spool.js';

export const T0 = Date.UTC(2026, 10, 21, 16, 43, 46, 613);

export interface OnTempSpool {
  spool: QueueSpool;
  index: MessageIndex;
  moves: Transitions;
  events: QueueEvents;
  /** What happened, in order: `created que`, `removed prep`, `finished`, … and `pump` for each pump. */ seen: string[];
  /** Ids that `admit` says wait on dependencies. */ waiting: Set<string>;
  /** A message made on disk in prep (commit false) or que. */ make(commit: boolean, extra?: Partial<Message>): Promise<Message>;
  /** A non-empty directory where `state/<id>` would go: a rename into it fails (ENOTEMPTY). */ block(state: 'que' | 'err', id: string): Promise<unknown>;
}

/** A fresh bench for each test; err and done start counted at 5 so a count that drops shows. */
export function transitionsPerTest(): OnTempSpool {
  let t: TempSpool;
  const s = {
    make: (commit: boolean, extra: Partial<Message> = {}) => s.spool.create({ dest: 'test', ...extra }, { commit }),
    block: (state: 'que' | 'err', id: string) => fs.mkdir(path.join(s.spool.msgDir(state, id), 'x'), { recursive: true }),
  } as OnTempSpool;
  beforeEach(async () => {
    t = await tempSpool('test', { now: () => T0 });
    s.spool = t.spool;
    s.index = new MessageIndex(() => T0);
    s.index.setFinished('err', 5);
    s.index.setFinished('done', 5);
    s.events = new QueueEvents();
    s.seen = [];
    s.waiting = new Set();
    for (const name of ['created', 'removed', 'finished'] as const)
      s.events.on(name, (e: { state?: string }) => void s.seen.push(`${name} ${e.state ?? ''}`.trim()));
    s.moves = new Transitions({
      spool: t.spool,
      index: s.index,
      events: s.events,
      now: () => T0,
      admit: (m) => s.waiting.has(m.msg_id),
      pump: () => void s.seen.push('pump'),
    });
  });
  afterEach(() => t.cleanup());
  return s;
}
